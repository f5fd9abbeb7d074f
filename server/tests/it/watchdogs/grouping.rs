//! Alerts grouped in windows: a storm of 1,000 script errors brings one alert
//! at once and one summary with the count when the window ends; a new period
//! opens windows of its length; admins set the period and the signing secret.

use std::time::{Duration, Instant};

use futures_util::future::join_all;
use rapport_core::{backend_tests, ids::TenantId, model::Role, testing::TestDb, with_db};
use reqwest::StatusCode;
use serde_json::json;

use super::{script_errors, visitor, wait_for_mails, watchdog, WAIT};
use crate::{
    dashboard::{page, server_fn, server_fn_ok, session},
    receiver::Receiver,
    utils::{actor, TestApp},
};

/// Waits until the tenant has no alert or window job left: every alert is
/// delivered and every window has ended.
async fn no_alert_jobs_left(app: &TestApp, tenant: &TenantId) {
    let deadline = Instant::now() + WAIT;
    loop {
        let pending: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
            "select count(*) from jobs where tenant_id = $1 and kind in ('alert.deliver', 'watchdog.summary')"
        )
        .bind(tenant)
        .fetch_one(pool)
        .await)
        .unwrap();
        if pending == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "{pending} alert jobs left");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn a_storm_of_script_errors_is_grouped(db: TestDb) {
    // Ten pages report at once, each from its visitor's address, which the
    // proxy in front of the server forwards.
    let app = TestApp::start_with(db, |c| c.trusted_proxies = "127.0.0.1".parse().unwrap()).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    let hook = Receiver::start().await;
    let window_ms: i64 = 10_000;
    app.services
        .set_watchdog_window(&tenant, window_ms / 1000, &actor())
        .await
        .unwrap();
    watchdog(
        &app,
        &key,
        "Script errors",
        "JAVASCRIPT_ERROR",
        json!([{"type": "EMAIL", "value": "ops@alpha.example"}, {"type": "WEBHOOK", "value": hook.url}]),
    )
    .await;
    let (widget_key, _, _) = visitor(&app, &key).await;

    // Windows are aligned to the clock: start the storm early in one, so that
    // it ends in the same window.
    let now = chrono::Utc::now().timestamp_millis();
    let left = window_ms - now.rem_euclid(window_ms);
    if left < 8_000 {
        tokio::time::sleep(Duration::from_millis(u64::try_from(left).unwrap() + 50)).await;
    }
    let window = |t: i64| t - t.rem_euclid(window_ms);
    let started = chrono::Utc::now().timestamp_millis();
    // One error, then 999 more as ten pages report theirs at once (a batch
    // holds at most 100).
    script_errors(&app, &widget_key, "first", 1).await;
    join_all((0..10).map(|b| {
        let (app, widget_key) = (&app, &widget_key);
        async move { script_errors(app, widget_key, &format!("b{b}"), if b == 9 { 99 } else { 100 }).await }
    }))
    .await;
    let ended = chrono::Utc::now().timestamp_millis();
    let windows = window(ended) / window_ms - window(started) / window_ms + 1;

    // One alert at once.
    let first = hook.wait_for(1, WAIT).await;
    assert_eq!(first[0].json()["count"], 1, "{}", first[0].json());
    if windows == 1 {
        // And one summary once the window ends, with the count.
        let got = hook.wait_for(2, WAIT).await;
        let summary = got[1].json();
        assert_eq!(summary["count"], 999, "{summary}");
        assert!(
            summary["body"].as_str().unwrap().starts_with("And 999 more"),
            "{summary}"
        );
        let mails = wait_for_mails(&app, &tenant, 2).await;
        assert!(
            mails[0].subject.starts_with("Script errors: script error"),
            "{}",
            mails[0].subject
        );
        assert!(mails[1].body.contains("Events: 999"), "{}", mails[1].body);
    } else {
        // A slow machine let the storm run into the next window: each window
        // still sends at most its first alert and one summary, and together
        // they report every error.
        let deadline = Instant::now() + WAIT;
        let mut got = hook.received();
        while got.iter().map(|d| d.json()["count"].as_i64().unwrap()).sum::<i64>() < 1000 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
            got = hook.received();
        }
        assert_eq!(
            got.iter().map(|d| d.json()["count"].as_i64().unwrap()).sum::<i64>(),
            1000
        );
        assert!(
            got.len() <= 2 * usize::try_from(windows).unwrap(),
            "{} alerts",
            got.len()
        );
    }
    // Nothing more is on its way: no alert or window job is left.
    no_alert_jobs_left(&app, &tenant).await;
    let sent = hook.received().len();
    assert!(sent <= 2 * usize::try_from(windows).unwrap(), "{sent} alerts");
    app.stop().await;
}

/// After an admin changes the period, events fall in windows of the new
/// length, even one that starts where a window of the old length started:
/// its first event is alerted at once, and each window ends on its own.
async fn a_new_period_opens_windows_of_its_length(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    let hook = Receiver::start().await;
    app.services.set_watchdog_window(&tenant, 2, &actor()).await.unwrap();
    watchdog(
        &app,
        &key,
        "Script errors",
        "JAVASCRIPT_ERROR",
        json!([{"type": "WEBHOOK", "value": hook.url}]),
    )
    .await;
    let (widget_key, _, _) = visitor(&app, &key).await;

    // Every 6 seconds a 2-second window and a 6-second one start together:
    // one error just after such a mark, in a 2-second window; then the period
    // becomes 6 seconds and one more error falls in the 6-second window that
    // starts at the same mark.
    let now = chrono::Utc::now().timestamp_millis();
    let to_mark = 6_000 - now.rem_euclid(6_000);
    tokio::time::sleep(Duration::from_millis(u64::try_from(to_mark).unwrap() + 50)).await;
    script_errors(&app, &widget_key, "short", 1).await;
    app.services.set_watchdog_window(&tenant, 6, &actor()).await.unwrap();
    script_errors(&app, &widget_key, "long", 1).await;

    // Two alerts at once, each its window's first event, not one alert and a
    // summary of "1 more". Deliveries of two events may arrive in either order.
    let got = hook.wait_for(2, WAIT).await;
    let mut bodies: Vec<String> = got
        .iter()
        .map(|alert| {
            let alert = alert.json();
            assert_eq!(alert["count"], 1, "{alert}");
            alert["body"].as_str().unwrap().to_string()
        })
        .collect();
    bodies.sort();
    for (body, prefix) in bodies.iter().zip(["long", "short"]) {
        assert!(
            body.starts_with(&format!("TypeError: x is undefined ({prefix}-0)")),
            "{bodies:?}"
        );
    }
    // Both windows end with nothing more to say: no job is left, and no
    // summary was sent.
    no_alert_jobs_left(&app, &tenant).await;
    assert_eq!(hook.received().len(), 2);
    app.stop().await;
}

async fn admins_set_how_alerts_are_sent(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "admin@alpha.example", Role::Admin, false).await;
    app.user(&tenant, "agent@alpha.example", Role::Agent, false).await;
    let admin = session(&app, "admin@alpha.example").await;
    let agent = session(&app, "agent@alpha.example").await;
    for name in ["alert_settings", "alert_secret", "rotate_alert_secret"] {
        assert_eq!(
            server_fn(&app, name, &agent, &[]).await.status(),
            StatusCode::FORBIDDEN,
            "{name}"
        );
    }

    // The grouping period, in minutes.
    let settings = server_fn_ok(&app, "alert_settings", &admin, &[]).await;
    assert_eq!(settings["window_seconds"], 300, "{settings}");
    assert_eq!(
        server_fn_ok(&app, "set_alert_window", &admin, &[("minutes", "15")]).await,
        15
    );
    assert_eq!(app.services.watchdog_window(&tenant).await.unwrap(), 900);
    let refused = server_fn(&app, "set_alert_window", &admin, &[("minutes", "0")]).await;
    assert_ne!(refused.status(), StatusCode::OK);
    assert_eq!(app.services.watchdog_window(&tenant).await.unwrap(), 900);

    // The alert secret signs alerts to webhook URLs; after a rotation both
    // sign during the overlap, and the new one verifies.
    let hook = Receiver::start().await;
    let secret = server_fn_ok(&app, "alert_secret", &admin, &[]).await;
    let secret = secret.as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    watchdog(
        &app,
        &key,
        "Changes",
        "SETTING_CHANGED",
        json!([{"type": "WEBHOOK", "value": hook.url}]),
    )
    .await;
    hook.wait_for(1, WAIT).await[0].verify(&secret);
    let rotated = server_fn_ok(&app, "rotate_alert_secret", &admin, &[]).await;
    let rotated = rotated.as_str().unwrap().to_string();
    assert_ne!(rotated, secret);
    assert_eq!(server_fn_ok(&app, "alert_secret", &admin, &[]).await, rotated.as_str());
    // Shortening the period is a settings write too, counted in a window of
    // the new length: a new window, so it alerts at once.
    app.services.set_watchdog_window(&tenant, 1, &actor()).await.unwrap();
    let got = hook.wait_for(2, WAIT).await;
    let last = got.last().unwrap();
    last.verify(&rotated);
    last.verify(&secret);
    assert_eq!(last.header("webhook-signature").split(' ').count(), 2);

    // The receiver URL is listed with its state, and the page says so.
    let settings = server_fn_ok(&app, "alert_settings", &admin, &[]).await;
    assert_eq!(settings["receivers"][0]["url"], hook.url.as_str(), "{settings}");
    assert_eq!(settings["receivers"][0]["enabled"], true, "{settings}");
    let html = page(&app, "/settings/watchdogs?secret=show", &admin)
        .await
        .text()
        .await
        .unwrap();
    assert!(html.contains(&rotated), "the page shows the secret on request");
    assert!(html.contains(&hook.url));
    app.stop().await;
}

backend_tests!(
    a_storm_of_script_errors_is_grouped,
    a_new_period_opens_windows_of_its_length,
    admins_set_how_alerts_are_sent,
);
