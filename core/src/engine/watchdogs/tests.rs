//! Unit tests of the watchdogs: windows on the clock, which audit actions are
//! settings, summaries, and windows open across the upgrade that keyed them by
//! their length.

use super::*;

#[test]
fn windows_are_aligned_to_the_clock() {
    let five = 300_000;
    assert_eq!(window_start(1_000_000_123, five), 999_900_000);
    assert_eq!(window_start(999_900_000, five), 999_900_000);
    assert_eq!(window_start(999_899_999, five), 999_600_000);
}

#[test]
fn settings_are_everything_but_conversations_and_their_like() {
    for action in [
        "user.update",
        "user.password",
        "team.delete",
        "watchdog.create",
        "routingrule.update",
        "openinghours.delete",
        "webhook.update",
        "webhook.rotate_secret",
        "apikey.revoke",
        "tenant.update",
        "widget.rotate_key",
        "alertsecret.rotate",
        "flow.create",
    ] {
        assert!(is_setting_action(action), "{action}");
    }
    for action in [
        "customer.assign",
        "customer.tags",
        "conversation.status",
        "message.send",
        "appointment.create",
        "session.record",
        "liveview.open",
        "cobrowse.create",
        "notification.read",
        "form.submit",
        "webhook.test",
        "webhook.replay",
    ] {
        assert!(!is_setting_action(action), "{action}");
    }
}

#[test]
fn long_summaries_are_cut() {
    assert_eq!(cut("abc", 5), "abc");
    assert_eq!(cut("abcdef", 3), "abc…");
}

/// Windows open when migration 0048 runs keep their length (their end job's
/// when it is still where it was scheduled, else the tenant's period), and
/// their end jobs name it, so each still ends its own window.
async fn open_windows_keep_their_length_through_the_upgrade(db: crate::testing::TestDb) {
    let s = db.services();
    let tenant = s
        .create_tenant(
            crate::tenants::NewTenant {
                name: Some("Upgrade".into()),
                ..Default::default()
            },
            &crate::audit::Actor::system("tests"),
        )
        .await
        .unwrap()
        .id;
    // As the release before left them: a 5-minute window and its end job,
    // opened before the period became 15 minutes; a window whose job is gone.
    crate::with_db!(&s.db().writer(), |pool| {
        sqlx::query("update tenants set watchdog_window_seconds = 900 where id = $1")
            .bind(&tenant)
            .execute(pool)
            .await.unwrap();
        sqlx::query(
            "insert into watchdog_windows (tenant_id, watchdog_id, window_start, events, sent_events, \
             last_summary, last_link) values ($1, 'w1', 600000, 3, 1, 'latest', null), ($1, 'w2', 0, 1, 1, 'only', null)",
        )
        .bind(&tenant)
        .execute(pool)
        .await.unwrap();
        sqlx::query(
            "insert into jobs (id, tenant_id, kind, job_key, payload, due_at, created_at) \
             values ('j1', $1, 'watchdog.summary', $2, $3, 900000, 0)",
        )
        .bind(&tenant)
        .bind(format!("{tenant}:w1:600000"))
        .bind(r#"{"watchdogId":"w1","windowStart":600000}"#)
        .execute(pool)
        .await.unwrap();
        Ok::<_, sqlx::Error>(())
    })
    .unwrap();

    s.db().migrate().await.unwrap();

    let windows: Vec<(String, i64, i64)> = crate::with_db!(s.db(), |pool| sqlx::query_as(
        "select watchdog_id, window_ms, events from watchdog_windows where tenant_id = $1 order by watchdog_id"
    )
    .bind(&tenant)
    .fetch_all(pool)
    .await)
    .unwrap();
    assert_eq!(
        windows,
        [("w1".to_string(), 300_000, 3), ("w2".to_string(), 900_000, 1)]
    );
    let (key, payload): (String, String) = crate::with_db!(s.db(), |pool| sqlx::query_as(
        "select job_key, payload from jobs where id = 'j1'"
    )
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(key, format!("{tenant}:w1:600000:300000"));
    let end: WindowEnd = serde_json::from_str(&payload).unwrap();
    assert_eq!(
        (end.watchdog_id.as_str(), end.window_start, end.window_ms),
        ("w1", 600_000, 300_000)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_windows_keep_their_length_through_the_upgrade_on_sqlite() {
    let db = crate::testing::TestDb::sqlite_until(Some(47)).await.unwrap();
    open_windows_keep_their_length_through_the_upgrade(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_windows_keep_their_length_through_the_upgrade_on_postgres() {
    match crate::testing::TestDb::postgres_until(Some(47)).await.unwrap() {
        Some(db) => open_windows_keep_their_length_through_the_upgrade(db).await,
        None => eprintln!("skipped: {} is not set", crate::testing::POSTGRES_URL_VAR),
    }
}
