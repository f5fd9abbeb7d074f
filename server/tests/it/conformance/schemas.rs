//! The document's schemas: validators built once per schema, `$ref`s resolved,
//! and a schema's parts flattened into one to draw values from.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use serde_json::{json, Map, Value};

/// The document, with validators built once per schema.
pub(super) struct Doc {
    pub(super) doc: Value,
    pub(super) validators: HashMap<String, Arc<jsonschema::Validator>>,
}

impl Doc {
    /// Whether `value` is valid against `schema`, whose `$ref`s point into the document.
    pub(super) fn is_valid(&mut self, schema: &Value, value: &Value) -> bool {
        self.validator(schema).is_valid(value)
    }

    /// Why `value` is not valid against `schema`, if it is not.
    pub(super) fn errors(&mut self, schema: &Value, value: &Value) -> Option<String> {
        let validator = self.validator(schema);
        let errors: Vec<String> = validator
            .iter_errors(value)
            .take(5)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        (!errors.is_empty()).then(|| errors.join("; "))
    }

    pub(super) fn validator(&mut self, schema: &Value) -> Arc<jsonschema::Validator> {
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
    pub(super) fn resolve(&self, reference: &str) -> Value {
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
    pub(super) fn flatten(&self, schema: &Value) -> Map<String, Value> {
        let mut out = Map::new();
        self.absorb(&mut out, schema, 0);
        out
    }

    pub(super) fn absorb(&self, out: &mut Map<String, Value>, schema: &Value, depth: usize) {
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

pub(super) fn push(out: &mut Map<String, Value>, key: &str, value: Value) {
    out.entry(key)
        .or_insert_with(|| json!([]))
        .as_array_mut()
        .expect("a list")
        .push(value);
}

pub(super) fn tighten(out: &mut Map<String, Value>, key: &str, value: &Value, pick: fn(f64, f64) -> f64) {
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
