//! Conformance: the published OpenAPI document (`/rest/v1/openapi.json`) is fuzzed
//! against the running server, on both backends.
//!
//! For every operation the test builds requests from the document alone: bodies
//! and query parameters with only the required fields (*minimal*), with every field
//! (*full*), at the documented bounds (*max*, *min*), at random (*random*, which
//! also sends nulls and wrong types), and the schema's own example; plus the token
//! cases (none, and a header and `access_token` that disagree) and unknown path
//! ids. Path parameters and reference fields (`customerId`, `openingHoursId`, …)
//! name objects the test created first, so operations get past their 404s.
//!
//! It fails on any 5xx, on any status the operation does not document, on any body
//! that does not match the documented schema of its status and media type, and on
//! any 422 for a request the document calls complete: a minimal one, which holds
//! every required field, valid (the test checks it against the request schema,
//! with its conditions, before sending it); and a full or boundary one whose body
//! the schema accepts, unless only a rule between two fields that JSON Schema
//! cannot state refused it (an end before its start, see [`CROSS_FIELD_RULES`]).
//!
//! Cases are drawn from a fixed seed per operation, so every run sends the same.

use std::collections::HashMap;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{ok_json, TestApp};

mod agreement;
mod cases;
mod draw;
mod findings;
mod fixtures;
mod schema_names;
mod schemas;

use schemas::Doc;

/// The seed of every case.
const SEED: u64 = 0x5eed_0000_0021;
/// How often a random case draws a body again until it is valid (minimal and full).
const TRIES: usize = 40;
/// Random cases per operation.
const RANDOM_CASES: usize = 6;

/// What a case sends.
#[derive(Debug, Clone)]
struct Case {
    label: String,
    method: Method,
    path: String,
    query: Vec<(String, String)>,
    body: Option<Value>,
    auth: Auth,
    /// Whether the document calls the request complete, so that it must not be
    /// refused with 422.
    complete: Complete,
}

/// Whether a request is complete, in the document's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Complete {
    /// Every required field, each valid: never a 422.
    Strictly,
    /// Valid against its schema, with more than the required fields: a 422 only
    /// for the rules between fields that JSON Schema cannot state, which the
    /// descriptions name ([`CROSS_FIELD_RULES`]).
    ButForCrossFieldRules,
    /// Not claimed complete (random, out of bounds, unknown ids, no token).
    No,
}

/// The 422 codes of rules that no schema can state, which the descriptions
/// name: between two fields' values, an end that is not after its start
/// (`endHours`, holidays' `to`) and a user's `admin` that contradicts
/// its `roleId`; and between a value and what
/// the server holds, a visitor's attachment link that names no file the
/// visitor uploaded (`not_uploaded`) and an `identitySignature` that is not
/// the workspace's signature of the identity given (`signature_mismatch`).
const CROSS_FIELD_RULES: [&str; 4] = [
    "before_start",
    "conflicting_value",
    "not_uploaded",
    "signature_mismatch",
];

/// How a case authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Auth {
    /// As the operation's security says.
    Documented,
    /// Without any token.
    Missing,
    /// The right token in the header, another one in `access_token`.
    Conflicting,
}

/// An operation of the document.
struct Operation {
    method: Method,
    path: String,
    op: Value,
}

impl Operation {
    fn key(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    fn body_schema(&self) -> Option<Value> {
        self.op
            .pointer("/requestBody/content/application~1json/schema")
            .cloned()
    }

    /// The media type of a request body that is not JSON (a file's bytes).
    fn raw_body_media(&self) -> Option<String> {
        self.op
            .pointer("/requestBody/content")
            .and_then(Value::as_object)?
            .keys()
            .find(|m| *m != "application/json" && !m.ends_with("+json"))
            .cloned()
    }

    fn schemes(&self) -> Vec<String> {
        self.op["security"]
            .as_array()
            .and_then(|s| s.first())
            .and_then(Value::as_object)
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default()
    }
}
