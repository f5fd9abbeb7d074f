//! The platform stays out of a tenant's reach: a user with platform rights
//! (who manages every tenant) is changed only by a platform admin, whatever
//! the way in: a tenant API key over REST, or a tenant admin in the dashboard.

use rapport_core::{auth::LoginInput, backend_tests, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::{
    dashboard::{server_fn, server_fn_ok, session},
    utils::{expect_problem, ok_json, send, TestApp},
};

const PROTECTED: &str = "platform_admin_protected";

/// Whether `email` of the workspace signs in with `password`.
async fn signs_in(app: &TestApp, email: &str, password: &str) -> bool {
    app.services
        .login(&LoginInput {
            workspace: None,
            email: email.into(),
            password: password.into(),
        })
        .await
        .is_ok()
}

async fn a_tenant_key_cannot_change_a_platform_admin(db: TestDb) {
    let app = TestApp::start(db).await;
    // The bootstrap case: the workspace's first admin has platform rights.
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let root = app.user(&alpha, "root@alpha.example", Role::Admin, true).await;
    app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
    let path = format!("/rest/v1/user/{root}");

    // The key reads them, as any user of its tenant.
    let shown = ok_json(app.get(&path, &key).await, StatusCode::OK).await;
    assert_eq!(shown["email"], "root@alpha.example");

    // A new password, a new e-mail (then a password reset by mail), a demotion,
    // the same through POST with the id, and the deletion: all refused.
    for body in [
        json!({"email": "root@alpha.example", "roleId": "ADMIN", "password": "taken-over-123"}),
        json!({"email": "attacker@evil.example", "roleId": "ADMIN"}),
        json!({"email": "root@alpha.example", "roleId": "AGENT"}),
    ] {
        let put = send(&app, Method::PUT, &path, &key, Some(body.clone())).await;
        expect_problem(put, StatusCode::FORBIDDEN, PROTECTED).await;
        let mut with_id = body;
        with_id["id"] = json!(root);
        let post = app.post("/rest/v1/user", &key, with_id).await;
        expect_problem(post, StatusCode::FORBIDDEN, PROTECTED).await;
    }
    let delete = send(&app, Method::DELETE, &path, &key, None).await;
    expect_problem(delete, StatusCode::FORBIDDEN, PROTECTED).await;

    // Nothing changed, and nothing was recorded as changed.
    assert!(signs_in(&app, "root@alpha.example", "password-123").await);
    assert!(!signs_in(&app, "root@alpha.example", "taken-over-123").await);
    let after = ok_json(app.get(&path, &key).await, StatusCode::OK).await;
    assert_eq!(after, shown);
    let audit = ok_json(app.get("/rest/v1/audit?pageSize=100", &key).await, StatusCode::OK).await;
    let touched = audit["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["resourceId"] == json!(root) && e["action"].as_str().unwrap_or("").starts_with("user."))
        .count();
    assert_eq!(touched, 1, "only the creation: {audit}");

    // The refusal is about platform rights, not the key: the same key changes
    // the tenant's other users.
    let other = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let changed = send(
        &app,
        Method::PUT,
        &format!("/rest/v1/user/{other}"),
        &key,
        Some(json!({"email": "agent@alpha.example", "roleId": "AGENT", "password": "new-password-123"})),
    )
    .await;
    ok_json(changed, StatusCode::OK).await;
}

async fn a_tenant_admin_cannot_change_a_platform_admin_in_the_dashboard(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, _) = app.tenant_with_key("Alpha").await;
    let root = app.user(&alpha, "root@alpha.example", Role::Admin, true).await;
    app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
    let admin = session(&app, "admin@alpha.example").await;

    let id = [("id", root.as_str())];
    let edit = [
        ("id", root.as_str()),
        ("form[email]", "attacker@evil.example"),
        ("form[role]", "ADMIN"),
    ];
    for (name, form) in [
        ("edit_user", &edit[..]),
        ("reset_user_password", &id[..]),
        ("remove_user", &id[..]),
    ] {
        let refused = server_fn(&app, name, &admin, form).await;
        let status = refused.status();
        let text = refused.text().await.unwrap();
        assert_eq!(status, StatusCode::FORBIDDEN, "{name}: {text}");
        assert!(text.contains("platform"), "{name} says why: {text}");
    }
    assert!(signs_in(&app, "root@alpha.example", "password-123").await);
    let still = server_fn_ok(&app, "get_user", &admin, &id).await;
    assert_eq!(still["email"], "root@alpha.example");
}

async fn platform_admins_change_platform_admins(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let root = app.user(&alpha, "root@alpha.example", Role::Admin, true).await;
    let second = app.user(&alpha, "second@alpha.example", Role::Admin, true).await;
    let root_session = session(&app, "root@alpha.example").await;

    // Oneself, and another platform admin.
    let edited = server_fn_ok(
        &app,
        "edit_user",
        &root_session,
        &[
            ("id", root.as_str()),
            ("form[email]", "root@alpha.example"),
            ("form[role]", "ADMIN"),
            ("form[display_name]", "Root"),
        ],
    )
    .await;
    assert_eq!(edited["display_name"], "Root");
    let reset = server_fn_ok(&app, "reset_user_password", &root_session, &[("id", second.as_str())]).await;
    let password = reset["password"].as_str().unwrap();
    assert!(signs_in(&app, "second@alpha.example", password).await);

    // Another platform admin can go.
    let gone = server_fn(&app, "remove_user", &root_session, &[("id", second.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::OK);
    let by_key = send(&app, Method::GET, &format!("/rest/v1/user/{second}"), &key, None).await;
    expect_problem(by_key, StatusCode::NOT_FOUND, "not_found").await;
}

async fn the_last_platform_admin_stays(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, _) = app.tenant_with_key("Alpha").await;
    let root = app.user(&alpha, "root@alpha.example", Role::Admin, true).await;
    app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
    let root_session = session(&app, "root@alpha.example").await;
    let last = server_fn(&app, "remove_user", &root_session, &[("id", root.as_str())]).await;
    let status = last.status();
    let text = last.text().await.unwrap();
    assert_eq!(status, StatusCode::CONFLICT, "{text}");
    assert!(signs_in(&app, "root@alpha.example", "password-123").await);
}

backend_tests!(
    a_tenant_key_cannot_change_a_platform_admin,
    a_tenant_admin_cannot_change_a_platform_admin_in_the_dashboard,
    platform_admins_change_platform_admins,
    the_last_platform_admin_stays,
);
