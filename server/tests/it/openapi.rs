//! The OpenAPI document and the router must describe the same API.
//!
//! Both directions are checked: every documented operation is routed (it never
//! answers "no such route" or "method not allowed"), and no REST route can exist
//! without a document entry because the REST modules declare routes only through
//! `utoipa_axum::routes!` (which reads `#[utoipa::path]`), never `.route(`.

use std::path::Path;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::Method;
use serde_json::Value;

use crate::utils::TestApp;

async fn every_documented_operation_is_routed(db: TestDb) {
    let app = TestApp::start(db).await;
    let doc: Value = app
        .request(Method::GET, "/rest/v1/openapi.json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(doc["openapi"].as_str().unwrap().starts_with("3.1"), "OpenAPI 3.1");
    for scheme in ["tenantKey", "tenantKeyQuery", "platformKey", "platformKeyQuery"] {
        assert!(
            doc["components"]["securitySchemes"][scheme].is_object(),
            "{scheme} documented"
        );
    }
    assert!(doc["components"]["schemas"]["Problem"].is_object());

    let paths = doc["paths"].as_object().unwrap();
    let mut operations = 0;
    for (path, item) in paths {
        assert!(path.starts_with("/rest/v1/"), "{path}");
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            let url = path.replace("{id}", "00000000-0000-0000-0000-000000000000");
            let method = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let response = app
                .request(method.clone(), &url)
                .bearer_auth("rpt_not-valid")
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap_or(Value::Null);
            let code = body["code"].as_str().unwrap_or_default();
            assert!(
                code != "route_not_found" && code != "method_not_allowed",
                "{method} {path} is documented but not routed ({status} {body})"
            );
            assert!(
                op["responses"].as_object().is_some_and(|r| !r.is_empty()),
                "{method} {path} documents responses"
            );
            if op["responses"]["101"].is_object() {
                // A WebSocket: a plain request is told to upgrade, and who the
                // caller is comes in its first frame, not in a header.
                assert_eq!(status, reqwest::StatusCode::UPGRADE_REQUIRED, "{method} {path}: {body}");
                assert!(op["responses"]["426"].is_object(), "{method} {path} documents 426");
            } else if path != "/rest/v1/openapi.json" {
                assert!(op["responses"]["401"].is_object(), "{method} {path} documents 401");
                assert!(op["security"].is_array(), "{method} {path} documents its security");
                assert_eq!(
                    status,
                    reqwest::StatusCode::UNAUTHORIZED,
                    "{method} {path} refuses a bad token first: {body}"
                );
            }
        }
    }
    assert!(operations >= 10, "found {operations} operations");
}

#[test]
fn rest_routes_are_declared_only_through_the_documenting_macro() {
    let mut dirs = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src/rest")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            assert!(
                !source.contains(".route(") && !source.contains(".route_service("),
                "{} adds a route without documenting it; use utoipa_axum::routes!",
                path.display()
            );
        }
    }
}

backend_tests!(every_documented_operation_is_routed);
