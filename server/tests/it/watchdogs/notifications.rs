//! Notifications are per user and tenant, live on the user's bell, from any
//! instance.

use std::time::{Duration, Instant};

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::StatusCode;
use serde_json::json;

use super::{bell_stream, watchdog, WAIT};
use crate::{
    dashboard::{server_fn_ok, session},
    utils::{actor, expect_problem, fields, ok_json, read_until, TestApp},
};

async fn notifications_are_per_user_and_tenant(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let ann = app.user(&alpha, "ann@alpha.example", Role::Agent, false).await;
    let bob = app.user(&alpha, "bob@alpha.example", Role::Agent, false).await;
    let eve = app.user(&beta, "eve@beta.example", Role::Admin, false).await;
    let (ann_s, bob_s, eve_s) = (
        session(&app, "ann@alpha.example").await,
        session(&app, "bob@alpha.example").await,
        session(&app, "eve@beta.example").await,
    );
    let mut ann_stream = bell_stream(&app, &ann_s).await;
    let mut bob_stream = bell_stream(&app, &bob_s).await;
    let mut eve_stream = bell_stream(&app, &eve_s).await;

    // Another tenant cannot name Alpha's user as a receiver.
    let refused = app
        .post(
            "/rest/v1/watchdog",
            &beta_key,
            json!({"name": "Sneaky", "watchdogType": "SETTING_CHANGED", "receivers": [{"type": "USER", "value": ann}]}),
        )
        .await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["receivers[0].value"]);

    // Creating Ann's watchdog is a settings write: Ann is told, live.
    watchdog(
        &app,
        &key,
        "Settings for Ann",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": ann}]),
    )
    .await;
    read_until(&mut ann_stream, "event: notification", WAIT).await;
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &bob_s, &[]).await, 0);
    assert_eq!(server_fn_ok(&app, "notification_count", &eve_s, &[]).await, 0);
    let listed = server_fn_ok(&app, "list_notifications", &ann_s, &[]).await;
    assert_eq!(listed["unread"], 1, "{listed}");
    let item = &listed["items"][0];
    assert_eq!(item["title"], "Settings for Ann: setting changed", "{listed}");
    assert_eq!(item["link"], "/settings/audit?action=watchdog.create", "{listed}");
    assert_eq!(item["read"], false);
    let strangers = server_fn_ok(&app, "list_notifications", &eve_s, &[]).await;
    assert_eq!(strangers["items"], json!([]), "{strangers}");

    // Bob's own notification is the first his stream hears: Ann's never
    // reached it (it was published before, and the stream keeps order). The
    // same for Beta's admin, whose first is from Beta's watchdog.
    watchdog(
        &app,
        &key,
        "Settings for Bob",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": bob}]),
    )
    .await;
    let seen = read_until(&mut bob_stream, "event: notification", WAIT).await;
    assert_eq!(seen.matches("event: notification").count(), 1, "{seen}");
    watchdog(
        &app,
        &beta_key,
        "Beta settings",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": eve}]),
    )
    .await;
    let seen = read_until(&mut eve_stream, "event: notification", WAIT).await;
    assert_eq!(seen.matches("event: notification").count(), 1, "{seen}");
    assert_eq!(server_fn_ok(&app, "notification_count", &bob_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 1);

    // Marking read is each user's own.
    assert_eq!(server_fn_ok(&app, "mark_notifications_read", &eve_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "mark_notifications_read", &ann_s, &[]).await, 1);
    assert_eq!(server_fn_ok(&app, "notification_count", &ann_s, &[]).await, 0);
    assert_eq!(server_fn_ok(&app, "notification_count", &bob_s, &[]).await, 1);
    let listed = server_fn_ok(&app, "list_notifications", &ann_s, &[]).await;
    assert_eq!(listed["items"][0]["read"], true, "{listed}");
    // Open streams would hold the graceful shutdown.
    drop((ann_stream, bob_stream, eve_stream));
    app.stop().await;
}

/// Two instances on one PostgreSQL database: a notification written through
/// one reaches the user's bell on the other. SQLite runs one instance per
/// file, so this is PostgreSQL's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_reach_the_bell_on_another_instance() {
    let Some(db) = TestDb::postgres().await.expect("postgres test database") else {
        eprintln!("skipped: {} is not set", rapport_core::testing::POSTGRES_URL_VAR);
        return;
    };
    let a = TestApp::start(db).await;
    let b = a.another_instance().await;
    let (tenant, key) = a.tenant_with_key("Alpha").await;
    let ann = a.user(&tenant, "ann@alpha.example", Role::Agent, false).await;
    a.services.set_watchdog_window(&tenant, 1, &actor()).await.unwrap();
    let cookie = session(&a, "ann@alpha.example").await;
    let mut stream = bell_stream(&a, &cookie).await;
    watchdog(
        &b,
        &key,
        "Settings",
        "SETTING_CHANGED",
        json!([{"type": "USER", "value": ann}]),
    )
    .await;
    // A starts listening as it starts serving; until it does, what B
    // announces is not heard: change settings through B (a new window each
    // second) until A's stream hears one.
    let deadline = Instant::now() + WAIT;
    let mut seen = String::new();
    let mut n = 0;
    while !seen.contains("event: notification") {
        assert!(Instant::now() < deadline, "no notification reached instance A");
        n += 1;
        ok_json(
            b.post("/rest/v1/team", &key, json!({"name": format!("Team {n}")}))
                .await,
            StatusCode::CREATED,
        )
        .await;
        if let Ok(Some(chunk)) = tokio::time::timeout(Duration::from_millis(1500), stream.chunk())
            .await
            .map(Result::unwrap)
        {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
    assert!(a.services.unread_notifications(&tenant, &ann).await.unwrap() >= 1);
    drop(stream);
    b.stop().await;
    a.stop().await;
}

backend_tests!(notifications_are_per_user_and_tenant,);
