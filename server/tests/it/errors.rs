//! Every error class under `/rest/` is problem+json with a stable code.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, TestApp};

async fn every_error_class_is_problem_json(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, token) = app.tenant_with_key("Alpha").await;

    // Unknown path, also without a token.
    expect_problem(
        app.request(Method::GET, "/rest/v1/nothing-here").send().await.unwrap(),
        StatusCode::NOT_FOUND,
        "route_not_found",
    )
    .await;
    // Wrong method.
    let patch = app
        .request(Method::PATCH, "/rest/v1/apikey")
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    expect_problem(patch, StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed").await;
    // Malformed JSON.
    let malformed = app
        .request(Method::POST, "/rest/v1/apikey")
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body("{\"name\": ")
        .send()
        .await
        .unwrap();
    expect_problem(malformed, StatusCode::BAD_REQUEST, "malformed_json").await;
    // Wrong content type.
    let text = app
        .request(Method::POST, "/rest/v1/apikey")
        .bearer_auth(&token)
        .header("content-type", "text/plain")
        .body("name=x")
        .send()
        .await
        .unwrap();
    expect_problem(text, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;
    // Wrong type, with the field's path.
    let wrong_type = app.post("/rest/v1/apikey", &token, json!({ "name": 42 })).await;
    let body = expect_problem(wrong_type, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "name");
    assert_eq!(body["errors"][0]["code"], "invalid_type");
    // A rule broken.
    let blank = app.post("/rest/v1/apikey", &token, json!({ "name": " " })).await;
    let body = expect_problem(blank, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "name");
    assert_eq!(body["errors"][0]["code"], "required");
    // Page size past the bound: an error, not a clamp.
    let big = app.get("/rest/v1/apikey?pageSize=201", &token).await;
    let body = expect_problem(big, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "pageSize");
    let nonsense = app.get("/rest/v1/apikey?pageSize=lots", &token).await;
    let body = expect_problem(nonsense, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(body["errors"][0]["field"], "pageSize");
    // Oversized body (the test limit is 64 KiB). The server answers 413 and closes
    // without reading the rest, so a client still writing may see the connection
    // reset before it reads the answer: both are a refusal, and either way nothing
    // may be written. A client of its own, so the closed connection is not pooled
    // for the requests that follow.
    let huge = json!({ "name": "x".repeat(64 * 1024 + 100) });
    match reqwest::Client::new()
        .post(format!("{}/rest/v1/apikey", app.base))
        .bearer_auth(&token)
        .json(&huge)
        .send()
        .await
    {
        Ok(response) => {
            expect_problem(response, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
        }
        Err(e) => assert!(e.is_request(), "{e}"),
    }
    // Nothing was written by any of the failures.
    let listed: serde_json::Value = app.get("/rest/v1/apikey", &token).await.json().await.unwrap();
    assert_eq!(listed["page"]["totalElements"], 1);
}

async fn rate_limits_answer_429_with_retry_after(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.rate_limit_per_token = 3).await;
    let (_, token) = app.tenant_with_key("Alpha").await;
    for _ in 0..3 {
        assert_eq!(app.get("/rest/v1/apikey", &token).await.status(), StatusCode::OK);
    }
    let limited = app.get("/rest/v1/apikey", &token).await;
    let retry_after: u64 = limited
        .headers()
        .get("retry-after")
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&retry_after));
    expect_problem(limited, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // Another token is not limited by this one.
    let (_, other) = app.tenant_with_key("Beta").await;
    assert_eq!(app.get("/rest/v1/apikey", &other).await.status(), StatusCode::OK);
}

async fn per_ip_rate_limit(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.rate_limit_per_ip = 2).await;
    for _ in 0..2 {
        app.request(Method::GET, "/rest/v1/apikey").send().await.unwrap();
    }
    let limited = app.request(Method::GET, "/rest/v1/apikey").send().await.unwrap();
    expect_problem(limited, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
}

async fn request_timeout_is_problem_json(db: TestDb) {
    // A body that never finishes arriving keeps the handler waiting past the timeout.
    let app = TestApp::start_with(db, |c| c.request_timeout_secs = 1).await;
    let (_, token) = app.tenant_with_key("Alpha").await;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(1);
    tx.send(Ok(b"{\"name\":".to_vec())).await.unwrap();
    let body = reqwest::Body::wrap_stream(tokio_stream::wrappers::ReceiverStream::new(rx));
    let response = app
        .request(Method::POST, "/rest/v1/apikey")
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    expect_problem(response, StatusCode::REQUEST_TIMEOUT, "request_timeout").await;
    drop(tx);
}

backend_tests!(
    every_error_class_is_problem_json,
    rate_limits_answer_429_with_retry_after,
    per_ip_rate_limit,
    request_timeout_is_problem_json,
);
