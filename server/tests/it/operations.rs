//! Health, readiness, metrics and request ids.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::utils::{expect_problem, TestApp};

async fn health_ready_and_metrics(db: TestDb) {
    let app = TestApp::start(db).await;
    let health = app.request(Method::GET, "/health").send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    let ready: Value = app
        .request(Method::GET, "/ready")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(ready["status"], "ready");

    let (tenant, token) = app.tenant_with_key("Alpha").await;
    let _ = tenant;
    assert_eq!(app.get("/rest/v1/apikey", &token).await.status(), StatusCode::OK);
    let _ = app.get("/rest/v1/apikey/nope", &token).await;

    let metrics = app.request(Method::GET, "/metrics").send().await.unwrap();
    assert!(metrics.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/plain"));
    let text = metrics.text().await.unwrap();
    assert!(
        text.contains(r#"rapport_http_requests_total{method="GET",route="/rest/v1/apikey",status="200"} 1"#),
        "{text}"
    );
    assert!(text.contains(r#"route="/rest/v1/apikey/{id}",status="404""#), "{text}");
    assert!(text.contains("rapport_http_request_duration_seconds_bucket"), "{text}");
}

async fn readiness_fails_when_the_database_is_gone(db: TestDb) {
    let app = TestApp::start(db).await;
    app.services.db().close().await;
    let ready = app.request(Method::GET, "/ready").send().await.unwrap();
    assert_eq!(ready.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        app.request(Method::GET, "/health").send().await.unwrap().status(),
        StatusCode::OK
    );
}

async fn request_ids_are_returned_and_quoted(db: TestDb) {
    let app = TestApp::start(db).await;
    let generated = app.request(Method::GET, "/health").send().await.unwrap();
    let id = generated.headers()["x-request-id"].to_str().unwrap();
    assert_eq!(id.len(), 36, "a UUID: {id}");

    let given = app
        .request(Method::GET, "/rest/v1/apikey")
        .header("x-request-id", "trace-abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(given.headers()["x-request-id"], "trace-abc-123");
    let body = expect_problem(given, StatusCode::UNAUTHORIZED, "missing_token").await;
    assert_eq!(body["requestId"], "trace-abc-123");

    let unsafe_id = app
        .request(Method::GET, "/health")
        .header("x-request-id", "bad id\twith spaces")
        .send()
        .await
        .unwrap();
    assert_ne!(unsafe_id.headers()["x-request-id"], "bad id\twith spaces");
}

async fn graceful_shutdown_finishes_in_flight_requests(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, token) = app.tenant_with_key("Alpha").await;
    // Start a request whose body arrives slowly, then ask the server to stop.
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Vec<u8>, std::io::Error>>(4);
    tx.send(Ok(b"{\"name\": \"slow".to_vec())).await.unwrap();
    let request = app
        .request(Method::POST, "/rest/v1/apikey")
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(reqwest::Body::wrap_stream(tokio_stream::wrappers::ReceiverStream::new(
            rx,
        )))
        .send();
    let in_flight = tokio::spawn(request);
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let base = app.base.clone();
    let stopping = tokio::spawn(app.stop());
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!stopping.is_finished(), "the server waits for the in-flight request");
    tx.send(Ok(b" key\"}".to_vec())).await.unwrap();
    drop(tx);
    let response = in_flight.await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    stopping.await.unwrap();
    assert!(
        reqwest::get(format!("{base}/health")).await.is_err(),
        "no longer accepting connections"
    );
}

backend_tests!(
    health_ready_and_metrics,
    readiness_fails_when_the_database_is_gone,
    request_ids_are_returned_and_quoted,
    graceful_shutdown_finishes_in_flight_requests,
);
