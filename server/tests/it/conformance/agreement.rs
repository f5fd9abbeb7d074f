//! The conformance test itself: every case of every documented operation sent to
//! the running server, and each answer checked against the document.

use std::collections::{BTreeMap, HashMap};

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::Value;

use crate::utils::{ok_json, TestApp};

use super::{
    cases::cases_of,
    fixtures::{fixtures, Fixtures},
    schemas::Doc,
    Auth, Case, Complete, Operation, CROSS_FIELD_RULES,
};

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

backend_tests!(the_document_and_the_server_agree);
