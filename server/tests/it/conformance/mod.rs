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

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::Arc,
};

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Map, Value};

use crate::utils::{ok_json, TestApp};

mod draw;
mod findings;
mod fixtures;

use draw::*;
use fixtures::*;

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

/// Fills `{…}` path parameters with the fixtures' ids (or `unknown` ids).
fn fill_path(path: &str, fixtures: &Fixtures, unknown: bool) -> String {
    let mut out = Vec::new();
    let segments: Vec<&str> = path.split('/').collect();
    for (i, segment) in segments.iter().enumerate() {
        let Some(name) = segment.strip_prefix('{').and_then(|s| s.strip_suffix('}')) else {
            out.push(segment.to_string());
            continue;
        };
        if unknown {
            out.push(uuid::Uuid::now_v7().to_string());
            continue;
        }
        let id = match name {
            "customerId" => fixtures.customer_target.clone(),
            "appointmentId" => fixtures.appointment.clone(),
            "recordingId" => fixtures.recording.clone(),
            "deliveryId" => fixtures.delivery.clone(),
            "id" => {
                let resource = segments[i - 1];
                fixtures
                    .targets
                    .get(resource)
                    .unwrap_or_else(|| panic!("a fixture for {path}"))
                    .clone()
            }
            other => panic!("no fixture for the path parameter {other} of {path}"),
        };
        out.push(id);
    }
    out.join("/")
}

/// Query parameters drawn from the operation's parameters.
fn query_of(op: &Operation, gen: &mut Gen<'_>) -> Vec<(String, String)> {
    let mut query = Vec::new();
    for parameter in op.op["parameters"].as_array().into_iter().flatten() {
        if parameter["in"] != "query" {
            continue;
        }
        let required = parameter["required"] == true;
        let wanted = required
            || match gen.mode {
                Mode::Minimal => false,
                Mode::Random => gen.rng.chance(50),
                _ => true,
            };
        if !wanted {
            continue;
        }
        let mut schema = parameter["schema"].clone();
        if let Some(example) = parameter.get("example") {
            schema["example"] = example.clone();
        }
        let name = parameter["name"].as_str().unwrap_or_default().to_string();
        let value = gen.value(&schema, "", &name, 1);
        let text = match value {
            Value::Null => continue,
            Value::String(s) => s,
            other => other.to_string(),
        };
        query.push((name, text));
    }
    query
}

/// The cases of one operation.
fn cases_of(op: &Operation, doc: &mut Doc, fixtures: &Fixtures) -> Vec<Case> {
    let mut cases = Vec::new();
    let body_schema = op.body_schema();
    let now_ms = chrono::Utc::now().timestamp_millis();
    let modes = [
        (Mode::Minimal, 1),
        (Mode::Full, 1),
        (Mode::Max, 1),
        (Mode::Min, 1),
        (Mode::Random, RANDOM_CASES),
    ];
    for (mode, count) in modes {
        for n in 0..count {
            let label = format!("{mode:?} {n}");
            let mut gen = Gen {
                doc: &mut *doc,
                fixtures,
                rng: Rng(seed_of(&format!("{} {label}", op.key()))),
                mode,
                // Unique values (e-mails, external ids) differ between operations.
                counter: seed_of(&format!("{label} {}", op.key())) % 1_000_000_000,
                now_ms,
                operation: op.key(),
            };
            let query = query_of(op, &mut gen);
            let body = body_schema.as_ref().map(|schema| {
                let mut body = gen.value(schema, "", "", 0);
                // Minimal and full bodies are drawn again until the document calls
                // them valid, as a client reading it would build them.
                if matches!(mode, Mode::Minimal | Mode::Full) {
                    for _ in 0..TRIES {
                        if gen.doc.is_valid(schema, &body) {
                            break;
                        }
                        body = gen.value(schema, "", "", 0);
                    }
                }
                body
            });
            // Minimal requests are complete by construction (checked here); full and
            // boundary ones when the document calls their body valid.
            let complete = match mode {
                Mode::Minimal => Complete::Strictly,
                Mode::Full | Mode::Max | Mode::Min
                    if body
                        .as_ref()
                        .zip(body_schema.as_ref())
                        .is_some_and(|(b, s)| doc.is_valid(s, b)) =>
                {
                    Complete::ButForCrossFieldRules
                }
                _ => Complete::No,
            };
            if complete == Complete::Strictly {
                if let (Some(schema), Some(body)) = (&body_schema, &body) {
                    if let Some(why) = doc.errors(schema, body) {
                        panic!(
                            "{}: no complete body can be built from the document ({why}): {body}",
                            op.key()
                        );
                    }
                }
            }
            cases.push(Case {
                label,
                method: op.method.clone(),
                path: fill_path(&op.path, fixtures, false),
                query,
                body,
                auth: Auth::Documented,
                complete,
            });
        }
    }
    if let Some(example) = body_schema
        .as_ref()
        .and_then(|s| doc.flatten(s).get("example").cloned())
    {
        cases.push(Case {
            label: "example".into(),
            body: Some(example),
            complete: Complete::No,
            ..cases[0].clone()
        });
    }
    let first = cases[0].clone();
    if op.path.contains('{') {
        cases.push(Case {
            label: "unknown id".into(),
            path: fill_path(&op.path, fixtures, true),
            complete: Complete::No,
            ..first.clone()
        });
    }
    if !op.schemes().is_empty() {
        cases.push(Case {
            label: "no token".into(),
            auth: Auth::Missing,
            complete: Complete::No,
            ..first.clone()
        });
        cases.push(Case {
            label: "conflicting tokens".into(),
            auth: Auth::Conflicting,
            complete: Complete::No,
            ..first
        });
    }
    cases
}

/// Sends a case and checks the answer against the document; returns the problems,
/// the status and the answer's JSON body.
async fn run(
    app: &TestApp,
    doc: &mut Doc,
    op: &Operation,
    case: &Case,
    fixtures: &Fixtures,
) -> (Vec<String>, StatusCode, Value) {
    let mut request = app.request(case.method.clone(), &case.path).query(&case.query);
    let schemes = op.schemes();
    let bearer = if schemes.iter().any(|s| s.starts_with("platformKey")) {
        Some(fixtures.platform_token.clone())
    } else if schemes.iter().any(|s| s == "visitorToken") {
        Some(fixtures.visitor_token.clone())
    } else if schemes.iter().any(|s| s == "writeToken") {
        Some(fixtures.write_token.clone())
    } else if schemes.iter().any(|s| s.starts_with("tenantKey")) {
        Some(fixtures.tenant_token.clone())
    } else {
        None
    };
    if schemes.iter().any(|s| s == "widgetKey") && case.auth != Auth::Missing {
        request = request.header("rapport-widget-key", &fixtures.widget_key);
    }
    match (case.auth, &bearer) {
        (Auth::Documented, Some(token)) => request = request.bearer_auth(token),
        (Auth::Conflicting, Some(token)) => {
            request = request
                .bearer_auth(token)
                .query(&[("access_token", "rpt_another-token")]);
        }
        _ => {}
    }
    if let Some(body) = &case.body {
        request = request.json(body);
    } else if let Some(media) = op.raw_body_media() {
        // A body the document gives as bytes (a file): a few bytes of its type,
        // as any client uploading a file sends.
        request = request
            .header(header::CONTENT_TYPE, media)
            .body(&b"conformance file"[..]);
    }
    let response = request.send().await.unwrap();
    let status = response.status();
    let media = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().trim().to_ascii_lowercase());
    let what = format!(
        "{} [{}] {} ?{:?} body {} -> {status}",
        op.key(),
        case.label,
        case.path,
        case.query,
        case.body.as_ref().map(Value::to_string).unwrap_or_default()
    );
    // An event stream never ends: its head is all there is to check.
    let text = if media.as_deref() == Some("text/event-stream") {
        String::new()
    } else {
        response.text().await.unwrap_or_default()
    };
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let mut problems = Vec::new();
    if status.is_server_error() {
        problems.push(format!("{what}: server error {text}"));
    }
    if status == StatusCode::UNPROCESSABLE_ENTITY {
        let cross_field_only = body["errors"]
            .as_array()
            .is_some_and(|e| e.iter().all(|e| CROSS_FIELD_RULES.iter().any(|c| e["code"] == *c)));
        let refused = match case.complete {
            Complete::Strictly => true,
            Complete::ButForCrossFieldRules => !cross_field_only,
            Complete::No => false,
        };
        if refused {
            problems.push(format!(
                "{what}: a request the document calls complete was refused: {text}"
            ));
        }
    }
    if case.auth == Auth::Conflicting && bearer.is_some() && status != StatusCode::BAD_REQUEST {
        problems.push(format!("{what}: conflicting tokens were not refused with 400"));
    }
    let responses = &op.op["responses"];
    let documented = responses
        .get(status.as_str())
        .or_else(|| responses.get(format!("{}XX", status.as_u16() / 100)))
        .or_else(|| responses.get("default"));
    let Some(documented) = documented else {
        problems.push(format!("{what}: status {status} is not documented: {text}"));
        return (problems, status, body);
    };
    match (documented.get("content").and_then(Value::as_object), media.as_deref()) {
        (None, _) => {
            if !text.is_empty() {
                problems.push(format!("{what}: a body where the document describes none: {text}"));
            }
        }
        (Some(content), Some(media)) => match content.get(media) {
            None => problems.push(format!(
                "{what}: media type {media} is not documented (documented: {:?})",
                content.keys().collect::<Vec<_>>()
            )),
            Some(entry) => {
                let json_media = media == "application/json" || media.ends_with("+json");
                if let (true, Some(schema)) = (json_media, entry.get("schema")) {
                    match serde_json::from_str::<Value>(&text) {
                        Err(e) => problems.push(format!("{what}: the body is not JSON ({e}): {text}")),
                        Ok(value) => {
                            if let Some(why) = doc.errors(schema, &value) {
                                problems.push(format!("{what}: the body breaks its schema: {why}; body {text}"));
                            }
                        }
                    }
                }
            }
        },
        (Some(content), None) => {
            if !content.is_empty() {
                problems.push(format!("{what}: no content type, where the document describes a body"));
            }
        }
    }
    (problems, status, body)
}

async fn the_document_and_the_server_agree(db: TestDb) {
    let started = std::time::Instant::now();
    let app = TestApp::start_with(db, |c| {
        // Thousands of requests in a minute; the limits have tests of their own.
        c.rate_limit_per_token = 0;
        c.rate_limit_per_ip = 0;
        c.track_events_per_minute = 0;
        // Fuzzed subscriptions point at example.com: nothing is to be delivered.
        c.webhooks.worker = false;
    })
    .await;
    let document: Value = ok_json(
        app.request(Method::GET, "/rest/v1/openapi.json").send().await.unwrap(),
        StatusCode::OK,
    )
    .await;
    let mut doc = Doc {
        doc: document.clone(),
        validators: HashMap::new(),
    };
    let mut f = fixtures(&app).await;

    let mut operations = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations.push(Operation {
                method: Method::from_bytes(method.to_uppercase().as_bytes()).unwrap(),
                path: path.clone(),
                op: op.clone(),
            });
        }
    }
    // Deletions last, so that every other operation finds its objects.
    operations.sort_by_key(|o| (o.method == Method::DELETE, o.path.clone(), o.method.to_string()));

    let mut problems = Vec::new();
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut minimal_successes = 0;
    let mut minimal_refused = Vec::new();
    for op in &operations {
        for case in cases_of(op, &mut doc, &f) {
            let (found, status, body) = run(&app, &mut doc, op, &case, &f).await;
            problems.extend(found);
            *statuses.entry(status.as_u16()).or_default() += 1;
            if case.complete == Complete::Strictly && status.is_success() {
                minimal_successes += 1;
            } else if case.complete == Complete::Strictly {
                minimal_refused.push(format!("{} {status} {}", op.key(), body["code"]));
            }
            if op.path.ends_with("/widget/key/rotate") {
                if let Some(key) = body["widgetKey"].as_str() {
                    f.widget_key = key.to_string();
                }
            }
        }
    }
    eprintln!(
        "conformance: {} operations, statuses {statuses:?}, {minimal_successes} minimal requests succeeded \
         (the others: {minimal_refused:?}), in {:.1} s",
        operations.len(),
        started.elapsed().as_secs_f64()
    );
    // The cases get past authentication and the fixtures' 404s: most minimal
    // requests succeed (a test whose every request bounced would prove nothing).
    assert!(
        minimal_successes * 10 >= operations.len() * 8,
        "only {minimal_successes} of {} minimal requests succeeded",
        operations.len()
    );
    assert!(
        operations.len() >= 100,
        "only {} operations documented",
        operations.len()
    );
    assert!(
        problems.is_empty(),
        "{} conformance problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// utoipa files schemas by name and silently keeps one of two types that share a
/// name (the messages' `Channel` once documented the rules' `CHAT`/`CALL`). So no
/// two types that derive or implement `ToSchema` may share a schema name: a type
/// that must keep its Rust name takes another with `#[schema(as = …)]`.
#[test]
fn schema_names_are_unique() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut names: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut dirs = vec![root.join("core/src"), root.join("server/src"), root.join("app/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            for name in schema_names(&source) {
                names.entry(name).or_default().push(path.display().to_string());
            }
        }
    }
    assert!(names.len() > 100, "the schemas were found: {}", names.len());
    for renamed in ["MessageChannel", "DeliveredEventType", "EventType", "Channel"] {
        assert!(names.contains_key(renamed), "{renamed} was found");
    }
    let shared: Vec<_> = names.iter().filter(|(_, files)| files.len() > 1).collect();
    assert!(shared.is_empty(), "schema names used twice: {shared:?}");
}

/// The schema names a source file declares: each type deriving `ToSchema` (its
/// `#[schema(as = …)]` if it has one), and each hand-written `ToSchema` whose
/// `name()` returns a literal.
fn schema_names(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = source;
    while let Some(at) = rest.find("ToSchema") {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let line = &rest[line_start..rest[at..].find('\n').map_or(rest.len(), |i| at + i)];
        let after = &rest[at + "ToSchema".len()..];
        rest = after;
        if line.contains("derive(") {
            let item = after
                .split_once("struct ")
                .into_iter()
                .chain(after.split_once("enum "))
                .min_by_key(|(before, _)| before.len());
            let Some((attributes, tail)) = item else { continue };
            let ident: String = tail.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let renamed = attributes
                .split("schema(as = ")
                .nth(1)
                .and_then(|r| r.split(')').next())
                .map(|r| r.rsplit("::").next().unwrap_or(r).trim().to_string());
            names.push(renamed.unwrap_or(ident));
        } else if line.trim_start().starts_with("impl") && line.contains(" for ") {
            let body = after.split("\nimpl").next().unwrap_or(after);
            if let Some(literal) = body.split("fn name()").nth(1).and_then(|b| b.split('"').nth(1)) {
                names.push(literal.to_string());
            }
        }
    }
    names
}

backend_tests!(the_document_and_the_server_agree);
