//! The workspace's settings and widget key, and the audit log that shows
//! those writes: filtered and paged, for supervisors, per workspace.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::StatusCode;
use serde_json::json;

use super::{assert_refused, json_of};
use crate::{
    dashboard::{server_fn, session, Cast},
    utils::TestApp,
};

async fn workspace_settings_and_the_audit_log(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        beta,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    app.user(&alpha, "kim@alpha.example", Role::Agent, false).await;
    let agent = session(&app, "kim@alpha.example").await;

    let before = json_of(server_fn(&app, "get_workspace", &admin, &[]).await).await;
    let bad = server_fn(
        &app,
        "update_workspace",
        &admin,
        &[("name", " "), ("timezone", "Mars/Olympus")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains("field") && text.contains("name") && text.contains("timezone"),
        "{text}"
    );
    let updated = json_of(
        server_fn(
            &app,
            "update_workspace",
            &admin,
            &[("name", "Alpha Support"), ("timezone", "Asia/Kolkata")],
        )
        .await,
    )
    .await;
    assert_eq!(updated["name"], "Alpha Support");
    assert_eq!(updated["timezone"], "Asia/Kolkata");
    assert_eq!(app.services.get_tenant(&alpha).await.unwrap().timezone, "Asia/Kolkata");
    let rotated = json_of(server_fn(&app, "rotate_widget_key", &admin, &[]).await).await;
    assert_ne!(rotated["widget_key"], before["widget_key"]);
    let names = ["get_workspace", "update_workspace", "rotate_widget_key"];
    let form = [("name", "x"), ("timezone", "UTC")];
    assert_refused(&app, &names, &supervisor, &form, StatusCode::FORBIDDEN).await;

    // The log shows those writes with the admin's e-mail, filtered and paged;
    // supervisors read it, agents do not, and another workspace sees its own.
    let all = json_of(server_fn(&app, "read_audit_log", &supervisor, &[]).await).await;
    let actions: Vec<&str> = all["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert!(
        actions.contains(&"tenant.update") && actions.contains(&"widget.rotate_key"),
        "{actions:?}"
    );
    let tenant_only = json_of(
        server_fn(
            &app,
            "read_audit_log",
            &supervisor,
            &[("query[action]", "tenant.*"), ("query[actor]", "admin@alpha.example")],
        )
        .await,
    )
    .await;
    let entries = tenant_only["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{tenant_only}");
    assert_eq!(entries[0]["actor_email"], "admin@alpha.example");
    assert_eq!(entries[0]["action"], "tenant.update");
    let future = json_of(server_fn(&app, "read_audit_log", &supervisor, &[("query[from]", "2999-01-01")]).await).await;
    assert_eq!(future["entries"], json!([]));
    let bad_date = server_fn(&app, "read_audit_log", &supervisor, &[("query[to]", "yesterday")]).await;
    assert_eq!(bad_date.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        server_fn(&app, "read_audit_log", &agent, &[]).await.status(),
        StatusCode::FORBIDDEN
    );
    let theirs = json_of(server_fn(&app, "read_audit_log", &stranger, &[("query[action]", "tenant.*")]).await).await;
    let theirs: Vec<&str> = theirs["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["resource_id"].as_str().unwrap())
        .collect();
    assert_eq!(theirs, [beta.as_str()], "only its own workspace's entries");
}

backend_tests!(workspace_settings_and_the_audit_log,);
