//! Token placement, missing, bad and revoked tokens, tenant isolation, and the
//! platform key's reach.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, TestApp};

async fn both_token_placements_work(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, token) = app.tenant_with_key("Alpha").await;
    let by_header = app.get("/rest/v1/apikey", &token).await;
    assert_eq!(by_header.status(), StatusCode::OK);
    let by_query = app
        .request(Method::GET, &format!("/rest/v1/apikey?access_token={token}"))
        .send()
        .await
        .unwrap();
    assert_eq!(by_query.status(), StatusCode::OK);
    let page: Value = by_query.json().await.unwrap();
    assert_eq!(page["page"]["totalElements"], 1);
    assert_eq!(page["results"][0]["name"], "tests");
    assert!(page["results"][0].get("token").is_none(), "listing never shows tokens");
}

async fn missing_bad_and_conflicting_tokens(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, token) = app.tenant_with_key("Alpha").await;

    let missing = app.request(Method::GET, "/rest/v1/apikey").send().await.unwrap();
    let challenge = missing
        .headers()
        .get("www-authenticate")
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    expect_problem(missing, StatusCode::UNAUTHORIZED, "missing_token").await;

    let bad = app.get("/rest/v1/apikey", "rpt_not-a-real-token").await;
    assert!(bad
        .headers()
        .get("www-authenticate")
        .unwrap()
        .to_str()
        .unwrap()
        .contains("invalid_token"));
    expect_problem(bad, StatusCode::UNAUTHORIZED, "invalid_token").await;

    let basic = app
        .request(Method::GET, "/rest/v1/apikey")
        .header("authorization", "Basic Zm9vOmJhcg==")
        .send()
        .await
        .unwrap();
    expect_problem(basic, StatusCode::UNAUTHORIZED, "invalid_token").await;

    let conflicting = app
        .request(Method::GET, "/rest/v1/apikey?access_token=rpt_other")
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    expect_problem(conflicting, StatusCode::BAD_REQUEST, "conflicting_tokens").await;
}

async fn a_revoked_key_stops_working(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, admin_token) = app.tenant_with_key("Alpha").await;
    let created = app
        .post("/rest/v1/apikey", &admin_token, json!({ "name": "temporary" }))
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();
    let token = created["token"].as_str().unwrap().to_string();
    let id = created["key"]["id"].as_str().unwrap().to_string();
    assert_eq!(app.get("/rest/v1/apikey", &token).await.status(), StatusCode::OK);

    let revoked = app
        .request(Method::DELETE, &format!("/rest/v1/apikey/{id}"))
        .bearer_auth(&admin_token)
        .send()
        .await
        .unwrap();
    assert_eq!(revoked.status(), StatusCode::OK);
    let revoked: Value = revoked.json().await.unwrap();
    assert!(revoked["revokedAt"].is_string());

    expect_problem(
        app.get("/rest/v1/apikey", &token).await,
        StatusCode::UNAUTHORIZED,
        "invalid_token",
    )
    .await;
    assert_eq!(app.get("/rest/v1/apikey", &admin_token).await.status(), StatusCode::OK);
}

async fn another_tenants_ids_behave_as_absent(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, alpha) = app.tenant_with_key("Alpha").await;
    let (beta_id, beta) = app.tenant_with_key("Beta").await;
    let beta_key = app
        .services
        .list_api_keys(&beta_id, &Default::default())
        .await
        .unwrap()
        .results[0]
        .id
        .clone();

    let foreign = app.get(&format!("/rest/v1/apikey/{beta_key}"), &alpha).await;
    let foreign = expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    let unknown = app
        .get("/rest/v1/apikey/00000000-0000-0000-0000-000000000000", &alpha)
        .await;
    let unknown = expect_problem(unknown, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(
        foreign["detail"], unknown["detail"],
        "a foreign id reads exactly like an unknown one"
    );

    let revoke = app
        .request(Method::DELETE, &format!("/rest/v1/apikey/{beta_key}"))
        .bearer_auth(&alpha)
        .send()
        .await
        .unwrap();
    expect_problem(revoke, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(
        app.get("/rest/v1/apikey", &beta).await.status(),
        StatusCode::OK,
        "Beta's key still works"
    );
}

async fn platform_and_tenant_keys_stay_in_their_lanes(db: TestDb) {
    let app = TestApp::start(db).await;
    let platform = app.platform_key().await;
    let (_, tenant) = app.tenant_with_key("Alpha").await;

    expect_problem(
        app.get("/rest/v1/apikey", &platform).await,
        StatusCode::FORBIDDEN,
        "platform_key_not_allowed",
    )
    .await;
    expect_problem(
        app.get("/rest/v1/tenant", &tenant).await,
        StatusCode::FORBIDDEN,
        "tenant_key_not_allowed",
    )
    .await;
    let create = app.post("/rest/v1/tenant", &tenant, json!({ "name": "Sneaky" })).await;
    expect_problem(create, StatusCode::FORBIDDEN, "tenant_key_not_allowed").await;

    assert_eq!(app.get("/rest/v1/tenant", &platform).await.status(), StatusCode::OK);
}

backend_tests!(
    both_token_placements_work,
    missing_bad_and_conflicting_tokens,
    a_revoked_key_stops_working,
    another_tenants_ids_behave_as_absent,
    platform_and_tenant_keys_stay_in_their_lanes,
);
