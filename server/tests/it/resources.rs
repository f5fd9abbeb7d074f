//! The audit log, and authentication on every tenant route.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, fields, ok_json, TestApp};

async fn every_write_is_audited(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    let key_id = app
        .services
        .list_api_keys(&tenant, &Default::default())
        .await
        .unwrap()
        .results[0]
        .id
        .clone();
    let created = app
        .request(Method::POST, "/rest/v1/customer")
        .bearer_auth(&t)
        .header("x-request-id", "audit-req-1")
        .json(&json!({"firstName": "Ann"}))
        .send()
        .await
        .unwrap();
    let customer = ok_json(created, StatusCode::CREATED).await;
    ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "u@alpha.test"})).await,
        StatusCode::CREATED,
    )
    .await;
    // A refused write is not in the log.
    let _ = app.post("/rest/v1/user", &t, json!({"email": "broken"})).await;

    let log = ok_json(app.get("/rest/v1/audit", &t).await, StatusCode::OK).await;
    let actions: Vec<&str> = log["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["user.create", "customer.create", "apikey.create", "tenant.create"]
    );
    let entry = &log["results"][1];
    assert_eq!(entry["actorType"], "apikey");
    assert_eq!(entry["actorId"], key_id.as_str());
    assert_eq!(entry["resourceType"], "customer");
    assert_eq!(entry["resourceId"], customer["id"]);
    assert_eq!(entry["requestId"], "audit-req-1");
    assert_eq!(entry["ip"], "127.0.0.1");

    let only_customers = ok_json(app.get("/rest/v1/audit?action=customer.*", &t).await, StatusCode::OK).await;
    assert_eq!(only_customers["page"]["totalElements"], 1);
    let by_actor = ok_json(
        app.get(&format!("/rest/v1/audit?actor={key_id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(by_actor["page"]["totalElements"], 2);
    let future = ok_json(
        app.get("/rest/v1/audit?from=2100-01-01T00:00:00Z", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(future["page"]["totalElements"], 0);
    let bad_time = app.get("/rest/v1/audit?from=yesterday", &t).await;
    assert_eq!(
        fields(&expect_problem(bad_time, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["from"]
    );

    // Another tenant's log is separate.
    let (_, other) = app.tenant_with_key("Beta").await;
    let theirs = ok_json(app.get("/rest/v1/audit", &other).await, StatusCode::OK).await;
    assert_eq!(theirs["page"]["totalElements"], 2);
}

async fn every_tenant_route_needs_a_token(db: TestDb) {
    let app = TestApp::start(db).await;
    for path in [
        "customer",
        "user",
        "team",
        "openinghours",
        "systemmessage",
        "watchdog",
        "rule/routing",
        "rule/sla",
        "audit",
    ] {
        let response = app
            .request(Method::GET, &format!("/rest/v1/{path}"))
            .send()
            .await
            .unwrap();
        expect_problem(response, StatusCode::UNAUTHORIZED, "missing_token").await;
        let huge = app
            .request(Method::GET, &format!("/rest/v1/{path}?pageSize=1000"))
            .bearer_auth("rpt_x")
            .send()
            .await
            .unwrap();
        assert_eq!(huge.status(), StatusCode::UNAUTHORIZED, "authentication comes first");
    }
}

backend_tests!(every_write_is_audited, every_tenant_route_needs_a_token);
