//! `/rest/v1/tenant` with a platform key.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, TestApp};

async fn tenant_crud(db: TestDb) {
    let app = TestApp::start(db).await;
    let key = app.platform_key().await;

    let created = app
        .post(
            "/rest/v1/tenant",
            &key,
            json!({ "name": "ACME Europe", "timezone": "Europe/Berlin", "adminEmail": "boss@acme.eu" }),
        )
        .await;
    assert_eq!(created.status(), StatusCode::CREATED);
    let created: Value = created.json().await.unwrap();
    assert_eq!(created["slug"], "acme-europe");
    assert_eq!(created["timezone"], "Europe/Berlin");
    assert_eq!(created["initialAdmin"]["email"], "boss@acme.eu");
    let password = created["initialAdmin"]["generatedPassword"].as_str().unwrap();
    assert!(password.len() >= 16);
    let id = created["id"].as_str().unwrap().to_string();

    // The generated admin can sign in to the new tenant.
    let login = app
        .services
        .login(&rapport_core::auth::LoginInput {
            workspace: None,
            email: "boss@acme.eu".into(),
            password: password.into(),
        })
        .await
        .unwrap();
    assert_eq!(login.user.tenant_id, id);

    let got: Value = app
        .get(&format!("/rest/v1/tenant/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["name"], "ACME Europe");
    assert!(got["createdAt"].is_string());

    let updated = app
        .request(Method::PUT, &format!("/rest/v1/tenant/{id}"))
        .bearer_auth(&key)
        .json(&json!({ "name": "ACME EU" }))
        .send()
        .await
        .unwrap();
    assert_eq!(updated.status(), StatusCode::OK);
    let updated: Value = updated.json().await.unwrap();
    assert_eq!(
        (updated["name"].as_str(), updated["slug"].as_str()),
        (Some("ACME EU"), Some("acme-europe"))
    );

    let dup = app
        .post(
            "/rest/v1/tenant",
            &key,
            json!({ "name": "Other", "slug": "acme-europe" }),
        )
        .await;
    let dup = expect_problem(dup, StatusCode::CONFLICT, "slug_taken").await;
    assert_eq!(dup["errors"][0]["field"], "slug");

    let listed: Value = app
        .get("/rest/v1/tenant?pageSize=1&pageNumber=0", &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["page"]["pageSize"], 1);
    assert_eq!(listed["results"].as_array().unwrap().len(), 1);
    assert!(listed["page"]["totalElements"].as_i64().unwrap() >= 2);

    let deleted = app
        .request(Method::DELETE, &format!("/rest/v1/tenant/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    expect_problem(
        app.get(&format!("/rest/v1/tenant/{id}"), &key).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}

async fn tenant_validation_names_fields_and_writes_nothing(db: TestDb) {
    let app = TestApp::start(db).await;
    let key = app.platform_key().await;
    let before = app.services.count_tenants().await.unwrap();
    let bad = app
        .post(
            "/rest/v1/tenant",
            &key,
            json!({ "name": "", "timezone": "Mars/Base", "adminEmail": "not-an-email" }),
        )
        .await;
    let body = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        ["adminEmail"],
        "the admin is checked before anything is written"
    );
    let bad = app
        .post("/rest/v1/tenant", &key, json!({ "name": "", "timezone": "Mars/Base" }))
        .await;
    let body = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let fields: Vec<&str> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["name", "timezone"]);
    assert_eq!(app.services.count_tenants().await.unwrap(), before);
}

backend_tests!(tenant_crud, tenant_validation_names_fields_and_writes_nothing);
