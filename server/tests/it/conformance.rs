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

/// The seed of every case.
const SEED: u64 = 0x5eed_0000_0021;
/// How often a random case draws a body again until it is valid (minimal and full).
const TRIES: usize = 40;
/// Random cases per operation.
const RANDOM_CASES: usize = 6;

/// A small deterministic random source (splitmix64), so the cases never depend on a
/// crate's algorithm changing.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next() as u128 % span) as i128) as i64
    }
}

/// A seed for one operation and case, independent of the order of operations.
fn seed_of(text: &str) -> u64 {
    text.bytes()
        .fold(SEED, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// How a value is drawn from its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Only required fields, typical values inside every documented bound.
    Minimal,
    /// Every field, typical values.
    Full,
    /// Every field at its upper bounds (longest strings, largest numbers, most items).
    Max,
    /// Every field at its lower bounds.
    Min,
    /// Fields at random, with nulls, odd strings and out-of-type values.
    Random,
}

/// The objects the cases name: path targets, and anchors that bodies refer to (so
/// that deleting or changing a target never breaks a reference).
#[derive(Debug, Default, Clone)]
struct Fixtures {
    tenant_token: String,
    platform_token: String,
    widget_key: String,
    visitor_token: String,
    /// A recording's write token (`/widget/recording/{id}/…`).
    write_token: String,
    /// The id a path's `{id}` takes, by the path segment before it.
    targets: HashMap<&'static str, String>,
    customer_target: String,
    appointment: String,
    /// A recording of the appointment's call.
    recording: String,
    delivery: String,
    user: String,
    user_email: String,
    team: String,
    customer: String,
    customer_external_id: String,
    opening_hours: String,
    system_message: String,
    flow: String,
    rule: String,
    session: String,
}

/// The document, with validators built once per schema.
struct Doc {
    doc: Value,
    validators: HashMap<String, Arc<jsonschema::Validator>>,
}

impl Doc {
    /// Whether `value` is valid against `schema`, whose `$ref`s point into the document.
    fn is_valid(&mut self, schema: &Value, value: &Value) -> bool {
        self.validator(schema).is_valid(value)
    }

    /// Why `value` is not valid against `schema`, if it is not.
    fn errors(&mut self, schema: &Value, value: &Value) -> Option<String> {
        let validator = self.validator(schema);
        let errors: Vec<String> = validator
            .iter_errors(value)
            .take(5)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        (!errors.is_empty()).then(|| errors.join("; "))
    }

    fn validator(&mut self, schema: &Value) -> Arc<jsonschema::Validator> {
        let key = schema.to_string();
        if let Some(v) = self.validators.get(&key) {
            return v.clone();
        }
        let root = json!({"components": self.doc["components"], "allOf": [schema]});
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("the document's schema {schema} compiles: {e}"));
        let validator = Arc::new(validator);
        self.validators.insert(key, validator.clone());
        validator
    }

    /// The schema a `$ref` names.
    fn resolve(&self, reference: &str) -> Value {
        let pointer = reference.strip_prefix('#').expect("a local reference");
        self.doc
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{reference} is in the document"))
            .clone()
    }

    /// One schema out of `schema`'s `$ref`s and `allOf`s: properties (each an
    /// `allOf` of what every part says of it), the union of `required`, the
    /// tightest bounds, and the conditions (`if`/`then`, `not`, `anyOf`) kept in
    /// `x-conditions`. `x-name` is the first component it comes from.
    fn flatten(&self, schema: &Value) -> Map<String, Value> {
        let mut out = Map::new();
        self.absorb(&mut out, schema, 0);
        out
    }

    fn absorb(&self, out: &mut Map<String, Value>, schema: &Value, depth: usize) {
        assert!(depth < 40, "the document's references do not loop: {schema}");
        let Some(object) = schema.as_object() else {
            return;
        };
        if let Some(reference) = object.get("$ref").and_then(Value::as_str) {
            out.entry("x-name")
                .or_insert_with(|| json!(reference.rsplit('/').next().unwrap_or_default()));
            let target = self.resolve(reference);
            self.absorb(out, &target, depth + 1);
        }
        for (key, value) in object {
            match key.as_str() {
                "$ref" | "description" | "title" => {}
                "allOf" => {
                    for part in value.as_array().into_iter().flatten() {
                        self.absorb(out, part, depth + 1);
                    }
                }
                "if" => {
                    let mut condition = json!({"if": value});
                    if let Some(then) = object.get("then") {
                        condition["then"] = then.clone();
                    }
                    push(out, "x-conditions", condition);
                }
                "then" | "else" => {}
                "not" | "anyOf" => push(out, "x-conditions", json!({key.clone(): value})),
                "properties" => {
                    let properties = out.entry("properties").or_insert_with(|| json!({}));
                    for (name, property) in value.as_object().into_iter().flatten() {
                        let slot = properties
                            .as_object_mut()
                            .expect("properties")
                            .entry(name.clone())
                            .or_insert_with(|| json!({"allOf": []}));
                        slot["allOf"].as_array_mut().expect("allOf").push(property.clone());
                    }
                }
                "required" => {
                    for name in value.as_array().into_iter().flatten() {
                        let list = out.entry("required").or_insert_with(|| json!([]));
                        if !list.as_array().expect("required").contains(name) {
                            list.as_array_mut().expect("required").push(name.clone());
                        }
                    }
                }
                "items" => push(out, "x-items", value.clone()),
                "type" => {
                    let new: BTreeSet<String> = match value {
                        Value::String(t) => [t.clone()].into(),
                        Value::Array(ts) => ts.iter().filter_map(|t| t.as_str().map(String::from)).collect(),
                        _ => BTreeSet::new(),
                    };
                    let merged: BTreeSet<String> = match out.get("type") {
                        Some(Value::Array(old)) => {
                            let old: BTreeSet<String> =
                                old.iter().filter_map(|t| t.as_str().map(String::from)).collect();
                            old.intersection(&new).cloned().collect()
                        }
                        _ => new,
                    };
                    out.insert("type".into(), json!(merged));
                }
                "minimum" | "minLength" | "minItems" => tighten(out, key, value, |a, b| a.max(b)),
                "maximum" | "maxLength" | "maxItems" => tighten(out, key, value, |a, b| a.min(b)),
                _ => {
                    out.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
}

fn push(out: &mut Map<String, Value>, key: &str, value: Value) {
    out.entry(key)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .expect("a list")
        .push(value);
}

fn tighten(out: &mut Map<String, Value>, key: &str, value: &Value, pick: fn(f64, f64) -> f64) {
    let Some(new) = value.as_f64() else { return };
    let merged = match out.get(key).and_then(Value::as_f64) {
        Some(old) => pick(old, new),
        None => new,
    };
    let merged = if merged.fract() == 0.0 {
        json!(merged as i64)
    } else {
        json!(merged)
    };
    out.insert(key.into(), merged);
}

fn number(schema: &Map<String, Value>, key: &str) -> Option<i64> {
    schema.get(key).and_then(Value::as_f64).map(|n| n as i64)
}

/// Draws values from the document's schemas.
struct Gen<'a> {
    doc: &'a mut Doc,
    fixtures: &'a Fixtures,
    rng: Rng,
    mode: Mode,
    counter: u64,
    now_ms: i64,
}

impl Gen<'_> {
    fn unique(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// A value of `schema`; `owner` is the object schema it is a property of, and
    /// `name` its property name (for reference fields).
    fn value(&mut self, schema: &Value, owner: &str, name: &str, depth: usize) -> Value {
        let flat = self.doc.flatten(schema);
        if let Some(variants) = flat.get("oneOf").and_then(Value::as_array).cloned() {
            let mut base = flat.clone();
            base.remove("oneOf");
            // The variant names the object (`VisitIn` rather than `TrackEvent`).
            base.remove("x-name");
            let non_null: Vec<&Value> = variants.iter().filter(|v| !self.is_null_only(v)).collect();
            let variant = if self.mode == Mode::Random || non_null.is_empty() {
                variants[self.rng.below(variants.len())].clone()
            } else {
                non_null[self.rng.below(non_null.len())].clone()
            };
            return self.value(&json!({"allOf": [Value::Object(base), variant]}), owner, name, depth);
        }
        if let Some(hint) = self.hint(owner, name, &flat) {
            return hint;
        }
        if let Some(constant) = flat.get("const") {
            return constant.clone();
        }
        if let Some(values) = flat.get("enum").and_then(Value::as_array) {
            let non_null: Vec<&Value> = values.iter().filter(|v| !v.is_null()).collect();
            if self.mode == Mode::Random || non_null.is_empty() {
                return values[self.rng.below(values.len())].clone();
            }
            return non_null[self.rng.below(non_null.len())].clone();
        }
        if self.mode == Mode::Random && self.rng.chance(4) {
            // Out of type on purpose: the server must refuse it with a documented answer.
            return [json!(true), json!(-1), json!("x"), json!([]), json!({})][self.rng.below(5)].clone();
        }
        let types: Vec<String> = match flat.get("type") {
            Some(Value::Array(ts)) => ts.iter().filter_map(|t| t.as_str().map(String::from)).collect(),
            _ if flat.contains_key("properties") => vec!["object".into()],
            _ if flat.contains_key("x-items") => vec!["array".into()],
            _ => vec!["string".into()],
        };
        let concrete: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
        if concrete.is_empty()
            || (self.mode == Mode::Random && types.iter().any(|t| t == "null") && self.rng.chance(20))
        {
            return Value::Null;
        }
        let kind = concrete[self.rng.below(concrete.len())].clone();
        match kind.as_str() {
            "object" => self.object(&flat, depth),
            "array" => self.array(&flat, owner, name, depth),
            "integer" => json!(self.integer(&flat, name)),
            "number" => json!(self.integer(&flat, name) as f64 + 0.5),
            "boolean" => json!(self.rng.chance(50)),
            _ => json!(self.string(&flat)),
        }
    }

    fn is_null_only(&self, schema: &Value) -> bool {
        let flat = self.doc.flatten(schema);
        flat.get("type") == Some(&json!(["null"])) || flat.get("type") == Some(&json!("null"))
    }

    /// Values the schema cannot say: ids of the tenant's objects, recent times.
    fn hint(&mut self, owner: &str, name: &str, flat: &Map<String, Value>) -> Option<Value> {
        if self.mode == Mode::Random && self.rng.chance(30) {
            return None;
        }
        let f = self.fixtures;
        let is = |t: &str| {
            flat.get("type")
                .and_then(Value::as_array)
                .is_some_and(|ts| ts.iter().any(|x| x == t))
        };
        let id = |v: &str| Some(json!(v));
        match (owner, name) {
            ("LiveViewLinkRequest", "email") | ("CobrowseLinkRequest", "userEmail") => id(&f.user_email),
            (_, "customerId") if is("string") => id(&f.customer),
            (_, "userId" | "owner" | "assignedUser") if is("string") => id(&f.user),
            (_, "teamId" | "assignedTeam") if is("string") => id(&f.team),
            (_, "openingHoursId") => id(&f.opening_hours),
            // The tenant a platform key updates has no opening hours; null clears.
            ("TenantUpdate", "businessHoursId") => Some(Value::Null),
            (_, "businessHoursId") => id(&f.opening_hours),
            (_, "systemMessageId") => id(&f.system_message),
            (_, "flowId") => id(&f.flow),
            (_, "ruleId") => id(&f.rule),
            (_, "sessionId") if is("string") => id(&f.session),
            (_, "members") if is("array") => Some(json!([f.user])),
            (_, "ruleIds") if is("array") => Some(json!([f.rule])),
            // Visitor-script times must lie in the last 7 days.
            ("VisitIn" | "SessionIn", "startedAt") | ("ResourceIn" | "ScriptErrorIn", "at") if is("integer") => {
                Some(json!(self.now_ms - 120_000))
            }
            ("SessionIn", "endedAt") if is("integer") => Some(json!(self.now_ms - 60_000)),
            // A CUSTOM period of one hour, an hour ago.
            (_, "from") if is("integer") => Some(json!(self.now_ms - 7_200_000)),
            (_, "to") if is("integer") => Some(json!(self.now_ms - 3_600_000)),
            _ => None,
        }
    }

    fn object(&mut self, flat: &Map<String, Value>, depth: usize) -> Value {
        let owner = flat
            .get("x-name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let required: BTreeSet<String> = flat
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(|n| n.as_str().map(String::from)).collect())
            .unwrap_or_default();
        let properties: BTreeMap<String, Value> = flat
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default();
        let mut object = Map::new();
        for (name, schema) in &properties {
            let wanted = required.contains(name)
                || match self.mode {
                    Mode::Minimal => false,
                    Mode::Full | Mode::Max | Mode::Min => depth < 4,
                    Mode::Random => depth < 4 && self.rng.chance(50),
                };
            if wanted {
                let value = self.value(schema, &owner, name, depth + 1);
                object.insert(name.clone(), value);
            }
        }
        if properties.is_empty() && flat.contains_key("additionalProperties") && self.mode != Mode::Minimal {
            object.insert(format!("key{}", self.unique()), json!("value"));
        }
        // Conditions that require more once some field has a value.
        for condition in flat
            .get("x-conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
        {
            let (Some(when), Some(then)) = (condition.get("if"), condition.get("then")) else {
                continue;
            };
            if !self.doc.is_valid(when, &Value::Object(object.clone())) {
                continue;
            }
            for name in then.get("required").and_then(Value::as_array).into_iter().flatten() {
                let name = name.as_str().unwrap_or_default();
                if object.get(name).is_none_or(Value::is_null) {
                    let base = properties.get(name).cloned().unwrap_or(json!({}));
                    let extra = then
                        .pointer(&format!("/properties/{name}"))
                        .cloned()
                        .unwrap_or(json!({}));
                    let value = self.value(&json!({"allOf": [base, extra]}), &owner, name, depth + 1);
                    object.insert(name.to_string(), value);
                }
            }
        }
        self.fix(&owner, &mut object);
        Value::Object(object)
    }

    /// What a field means given another field's value (which no schema can say).
    fn fix(&mut self, owner: &str, object: &mut Map<String, Value>) {
        if self.mode == Mode::Random {
            return;
        }
        let f = self.fixtures;
        let kind = object
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        match owner {
            "QueueTarget" => {
                let value = match kind.as_str() {
                    "USER" => f.user.clone(),
                    "TEAM" => f.team.clone(),
                    _ => format!("tag-{}", self.unique()),
                };
                object.insert("value".into(), json!(value));
            }
            "WatchdogReceiver" => {
                let value = match kind.as_str() {
                    "USER" => f.user.clone(),
                    "EMAIL" => format!("receiver{}@example.com", self.unique()),
                    _ => format!("https://example.com/receiver/{}", self.unique()),
                };
                object.insert("value".into(), json!(value));
            }
            "MessageIn" if object.get("isExternalId") == Some(&json!(true)) => {
                object.insert("customerId".into(), json!(f.customer_external_id));
            }
            _ => {}
        }
    }

    fn array(&mut self, flat: &Map<String, Value>, owner: &str, name: &str, depth: usize) -> Value {
        let min = number(flat, "minItems").unwrap_or(0).max(0) as usize;
        let max = number(flat, "maxItems").map(|m| m.max(0) as usize);
        let count = match self.mode {
            Mode::Minimal | Mode::Min => min,
            Mode::Full => min.max(1),
            Mode::Max => max.unwrap_or(3).min(3).max(min),
            Mode::Random => self.rng.below(4),
        };
        let count = if depth >= 6 { min } else { count };
        let items = json!({"allOf": flat.get("x-items").cloned().unwrap_or(json!([]))});
        let mut values: Vec<Value> = Vec::new();
        for _ in 0..count {
            let v = self.value(&items, owner, name, depth + 1);
            // Items are unique wherever the server checks them.
            if !values.contains(&v) || self.mode == Mode::Random {
                values.push(v);
            }
        }
        Value::Array(values)
    }

    fn integer(&mut self, flat: &Map<String, Value>, _name: &str) -> i64 {
        let lo = number(flat, "minimum");
        let hi = number(flat, "maximum");
        match self.mode {
            Mode::Max => hi.unwrap_or(i64::from(i32::MAX)),
            Mode::Min => lo.unwrap_or(i64::from(i32::MIN)),
            Mode::Random if self.rng.chance(30) => [0, -1, i64::from(i32::MAX), i64::MAX, i64::MIN][self.rng.below(5)],
            _ => {
                let a = lo.unwrap_or(1).max(lo.unwrap_or(i64::MIN));
                let a = if lo.is_none() && hi.is_some_and(|h| h < 1) {
                    hi.unwrap_or(0)
                } else {
                    a
                };
                let b = hi.unwrap_or(a.saturating_add(20)).min(a.saturating_add(20));
                self.rng.range(a, b)
            }
        }
    }

    fn string(&mut self, flat: &Map<String, Value>) -> String {
        let n = self.unique();
        let format = flat.get("format").and_then(Value::as_str).unwrap_or_default();
        let min = number(flat, "minLength").unwrap_or(0).max(0) as usize;
        let max = number(flat, "maxLength").map(|m| m.max(0) as usize);
        if self.mode == Mode::Random && self.rng.chance(40) {
            let odd = [
                "",
                " ",
                "\u{1F600} ünïcödé",
                "a\nb",
                "'; drop table customers; --",
                "%00",
                "../..",
            ];
            return odd[self.rng.below(odd.len())].to_string();
        }
        let value = match format {
            "date-time" => (chrono::Utc::now() + chrono::Duration::days(1 + (n % 5) as i64))
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            "date" => (chrono::Utc::now() + chrono::Duration::days(1))
                .format("%Y-%m-%d")
                .to_string(),
            "email" => format!("fuzz{n}@example.com"),
            "uri" => {
                let base = format!("https://example.com/fuzz/{n}");
                match (self.mode, max) {
                    (Mode::Max, Some(max)) if max > base.len() => {
                        format!("{base}/{}", "p".repeat(max - base.len() - 1))
                    }
                    _ => base,
                }
            }
            _ => {
                if let Some(example) = flat.get("example").and_then(Value::as_str) {
                    return example.to_string();
                }
                let base = format!("fuzz-{n}");
                let len = match self.mode {
                    Mode::Max => max.unwrap_or(300),
                    Mode::Min => min.max(1),
                    _ => base.len().clamp(min, max.unwrap_or(usize::MAX)),
                };
                let mut text: String = base.chars().chain(std::iter::repeat('x')).take(len).collect();
                if text.is_empty() && min > 0 {
                    text = "x".repeat(min);
                }
                text
            }
        };
        value
    }
}

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
/// (`endHours`, holidays' `to`) and the two forms of one date
/// (`from`/`fromDate`) naming different days; and between a value and what
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

/// Creates the objects the cases name, through the API itself.
async fn fixtures(app: &TestApp) -> Fixtures {
    let (tenant_id, tenant_token) = app.tenant_with_key("Fuzzed").await;
    let platform_token = app.platform_key().await;
    let t = tenant_token.as_str();
    let create = |path: &'static str, body: Value| {
        let path = path.to_string();
        async move { ok_json(app.post(&path, t, body).await, StatusCode::CREATED).await }
    };
    let id = |v: &Value| v["id"].as_str().unwrap().to_string();
    let mut f = Fixtures {
        tenant_token: tenant_token.clone(),
        platform_token: platform_token.clone(),
        ..Default::default()
    };
    let now = chrono::Utc::now();

    let anchor_user = create("/rest/v1/user", json!({"email": "anchor@example.com"})).await;
    f.user = id(&anchor_user);
    f.user_email = "anchor@example.com".into();
    let target_user = create("/rest/v1/user", json!({"email": "target@example.com"})).await;
    f.targets.insert("user", id(&target_user));

    f.team = id(&create("/rest/v1/team", json!({"name": "Anchor", "members": [f.user]})).await);
    f.targets
        .insert("team", id(&create("/rest/v1/team", json!({"name": "Target"})).await));

    f.customer_external_id = "anchor-external".into();
    f.customer = id(&create("/rest/v1/customer", json!({"externalId": "anchor-external"})).await);
    f.customer_target = id(&create("/rest/v1/customer", json!({"firstName": "Target"})).await);
    f.targets.insert("customer", f.customer_target.clone());

    f.opening_hours = id(&create("/rest/v1/openinghours", json!({"name": "Anchor"})).await);
    f.targets.insert(
        "openinghours",
        id(&create("/rest/v1/openinghours", json!({"name": "Target"})).await),
    );
    let message = |text: &str| json!({"message": text, "language": "en"});
    f.system_message = id(&create("/rest/v1/systemmessage", message("Anchor")).await);
    f.targets.insert(
        "systemmessage",
        id(&create("/rest/v1/systemmessage", message("Target")).await),
    );
    let flow = |name: &str| json!({"name": name, "messages": [{"type": "MESSAGE", "message": "Hello"}]});
    f.flow = id(&create("/rest/v1/flow", flow("Anchor")).await);
    f.targets
        .insert("flow", id(&create("/rest/v1/flow", flow("Target")).await));
    let rule = |name: &str| json!({"name": name, "types": ["CHAT"], "actions": [{"type": "QUEUE", "target": {"type": "TAG", "value": "support"}}]});
    f.rule = id(&create("/rest/v1/rule/routing", rule("Anchor")).await);
    f.targets
        .insert("routing", id(&create("/rest/v1/rule/routing", rule("Target")).await));
    let sla = json!({"name": "Target", "trigger": {"firstResponseSeconds": 60, "secondResponseSeconds": 300}});
    f.targets.insert("sla", id(&create("/rest/v1/rule/sla", sla).await));
    let watchdog = json!({"name": "Target", "watchdogType": "JAVASCRIPT_ERROR"});
    f.targets
        .insert("watchdog", id(&create("/rest/v1/watchdog", watchdog).await));
    let date = (now + chrono::Duration::days(2)).to_rfc3339();
    f.appointment = id(&create("/rest/v1/appointment", json!({"title": "Target", "date": date})).await);
    // A recording is made by a call, not by a request: stored as the recorder does.
    let recording = rapport_core::appointments::recordings::NewConferenceRecording {
        appointment_id: f.appointment.clone(),
        participant: "Anchor".into(),
        source: rapport_core::appointments::recordings::RecordingSource::Camera,
        started_at: now.timestamp_millis() - 60_000,
        ended_at: now.timestamp_millis(),
        host: None,
    };
    f.recording = app
        .services
        .store_conference_recording(&tenant_id, &recording, &b"not really a webm file"[..])
        .await
        .unwrap()
        .id;
    let session = |name: &str| json!({"id": name, "visitorId": "visitor-1", "startedAt": now.to_rfc3339()});
    let recorded = app.post("/rest/v1/session", t, session("anchor-session")).await;
    f.session = ok_json(recorded, StatusCode::OK).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let recorded = app.post("/rest/v1/session", t, session("target-session")).await;
    let target_session = ok_json(recorded, StatusCode::OK).await;
    f.targets.insert("session", id(&target_session));
    let key = create("/rest/v1/apikey", json!({"name": "Target"})).await;
    f.targets.insert("apikey", id(&key["key"]));
    let webhook = id(&create("/rest/v1/webhook", json!({"url": "https://example.com/hook"})).await);
    let queued = app
        .post(&format!("/rest/v1/webhook/{webhook}/test"), t, json!({}))
        .await;
    ok_json(queued, StatusCode::ACCEPTED).await;
    let deliveries = ok_json(
        app.get(&format!("/rest/v1/webhook/{webhook}/delivery"), t).await,
        StatusCode::OK,
    )
    .await;
    f.delivery = deliveries["results"][0]["id"].as_str().unwrap().to_string();
    f.targets.insert("webhook", webhook);
    let tenant = app
        .post("/rest/v1/tenant", &platform_token, json!({"name": "Target"}))
        .await;
    f.targets
        .insert("tenant", id(&ok_json(tenant, StatusCode::CREATED).await));

    f.widget_key = ok_json(app.get("/rest/v1/widget/key", t).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let visitor = app
        .request(Method::POST, "/rest/v1/widget/visitor")
        .header("rapport-widget-key", &f.widget_key)
        .json(&json!({"firstName": "Visitor"}))
        .send()
        .await
        .unwrap();
    f.visitor_token = ok_json(visitor, StatusCode::CREATED).await["visitorToken"]
        .as_str()
        .unwrap()
        .to_string();
    let recording = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", &f.widget_key)
        .json(&json!({"visitorId": "visitor-1", "url": "https://shop.example/"}))
        .send()
        .await
        .unwrap();
    let recording = ok_json(recording, StatusCode::CREATED).await;
    f.write_token = recording["writeToken"].as_str().unwrap().to_string();
    f.targets
        .insert("recording", recording["sessionId"].as_str().unwrap().to_string());
    let sent = json!({"customerId": f.customer_target, "isExternalId": false, "type": "MESSAGE", "message": "Hello"});
    ok_json(app.post("/rest/v1/message", t, sent).await, StatusCode::CREATED).await;
    f
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
