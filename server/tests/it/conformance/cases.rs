//! The cases of one operation, built from the document alone: path parameters
//! filled with the fixtures' ids, query parameters and bodies drawn in each mode,
//! the schema's example, and the unknown-id and token cases.

use serde_json::Value;

use super::{
    draw::{seed_of, Gen, Mode, Rng},
    fixtures::Fixtures,
    schemas::Doc,
    Auth, Case, Complete, Operation, RANDOM_CASES, TRIES,
};

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
pub(super) fn cases_of(op: &Operation, doc: &mut Doc, fixtures: &Fixtures) -> Vec<Case> {
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
