//! Drawing requests from the document: a seeded random source, and values drawn
//! from a schema in each [`Mode`].

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};

use super::{fixtures::Fixtures, schemas::Doc, SEED};

/// A small deterministic random source (splitmix64), so the cases never depend on a
/// crate's algorithm changing.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub(super) fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub(super) fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next() as u128 % span) as i128) as i64
    }
}

/// A seed for one operation and case, independent of the order of operations.
pub(super) fn seed_of(text: &str) -> u64 {
    text.bytes()
        .fold(SEED, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// How a value is drawn from its schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
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

pub(super) fn number(schema: &Map<String, Value>, key: &str) -> Option<i64> {
    schema.get(key).and_then(Value::as_f64).map(|n| n as i64)
}

/// Draws values from the document's schemas.
pub(super) struct Gen<'a> {
    pub(super) doc: &'a mut Doc,
    pub(super) fixtures: &'a Fixtures,
    pub(super) rng: Rng,
    pub(super) mode: Mode,
    pub(super) counter: u64,
    pub(super) now_ms: i64,
    /// The operation drawn for (`POST /rest/v1/widget/read`): which
    /// conversation a message id must belong to.
    pub(super) operation: String,
}

impl Gen<'_> {
    pub(super) fn unique(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// A value of `schema`; `owner` is the object schema it is a property of, and
    /// `name` its property name (for reference fields).
    pub(super) fn value(&mut self, schema: &Value, owner: &str, name: &str, depth: usize) -> Value {
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

    pub(super) fn is_null_only(&self, schema: &Value) -> bool {
        let flat = self.doc.flatten(schema);
        flat.get("type") == Some(&json!(["null"])) || flat.get("type") == Some(&json!("null"))
    }

    /// Values the schema cannot say: ids of the tenant's objects, recent times.
    pub(super) fn hint(&mut self, owner: &str, name: &str, flat: &Map<String, Value>) -> Option<Value> {
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
            // A message of the conversation the operation reads: the visitor's
            // own, or the path's customer's.
            (_, "messageId") if self.operation.contains("/widget/") => id(&f.visitor_message),
            (_, "messageId") => id(&f.message),
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

    pub(super) fn object(&mut self, flat: &Map<String, Value>, depth: usize) -> Value {
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
    pub(super) fn fix(&mut self, owner: &str, object: &mut Map<String, Value>) {
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

    pub(super) fn array(&mut self, flat: &Map<String, Value>, owner: &str, name: &str, depth: usize) -> Value {
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

    pub(super) fn integer(&mut self, flat: &Map<String, Value>, _name: &str) -> i64 {
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

    pub(super) fn string(&mut self, flat: &Map<String, Value>) -> String {
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
