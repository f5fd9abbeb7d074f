//! Quiet sessions end once, with their reason (browse, chat, live view, script
//! error): viewers hear it, ended sessions take no more batches, and the
//! session-reason report counts each.

use rapport_core::{backend_tests, model::Role, testing::TestDb, time::now_ms};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use super::{append, start, WAIT};
use crate::{
    dashboard::session,
    utils::{expect_problem, ok_json, read_until, TestApp},
};

async fn quiet_sessions_end_with_their_reason(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Ends").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "agent@ends.example", Role::Agent, false).await;
    let agent = session(&app, "agent@ends.example").await;
    let batch = |text: &str| json!({"seq": 0, "events": [{"type": 2, "timestamp": now_ms(), "data": {"text": text}}]});

    // One session each: a visitor who only browses, one who chats, one an
    // agent watches, and one a script error hits.
    let (browsed, browsed_token) = start(&app, &key, json!({"visitorId": "v-browse", "tags": ["vip"]})).await;
    // Its browser's clock is three hours behind: quiet is the server's to judge.
    let behind = json!({"seq": 0, "events": [{"type": 2, "timestamp": now_ms() - 3 * 3_600_000}]});
    ok_json(
        append(&app, &key, &browsed, &browsed_token, &behind, false).await,
        StatusCode::OK,
    )
    .await;

    let (_, visitor_token) = app.widget_visitor(&key, "Cleo").await;
    let (chatted, chatted_token) = start(&app, &key, json!({"visitorId": "v-chat"})).await;
    let with_visitor = json!({"seq": 0, "events": [{"type": 2, "timestamp": now_ms()}], "visitorToken": visitor_token});
    ok_json(
        append(&app, &key, &chatted, &chatted_token, &with_visitor, false).await,
        StatusCode::OK,
    )
    .await;
    let sent = app
        .request(Method::POST, "/rest/v1/widget/message")
        .header("rapport-widget-key", &key)
        .bearer_auth(&visitor_token)
        .json(&json!({"message": "Hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), StatusCode::CREATED);

    let (watched, watched_token) = start(&app, &key, json!({"visitorId": "v-watch"})).await;
    let mut viewer = app
        .request(Method::GET, &format!("/sessions/{watched}/live"))
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(viewer.status(), StatusCode::OK);
    ok_json(
        append(&app, &key, &watched, &watched_token, &batch("w"), false).await,
        StatusCode::OK,
    )
    .await;
    read_until(&mut viewer, "event: events", WAIT).await;

    let (erred, erred_token) = start(&app, &key, json!({"visitorId": "v-error"})).await;
    ok_json(
        append(&app, &key, &erred, &erred_token, &batch("e"), false).await,
        StatusCode::OK,
    )
    .await;
    let error = json!({"events": [{"type": "SCRIPT_ERROR", "id": "err-1", "at": now_ms(), "visitorId": "v-error",
        "url": "https://shop.example/", "message": "TypeError: x"}]});
    let tracked = app
        .request(Method::POST, "/rest/v1/widget/track")
        .header("rapport-widget-key", &key)
        .json(&error)
        .send()
        .await
        .unwrap();
    assert_eq!(tracked.status(), StatusCode::ACCEPTED);

    // Not yet quiet for 30 minutes: nothing ends.
    assert_eq!(app.services.end_quiet_recordings(now_ms(), 100).await.unwrap(), 0);
    // Half an hour later, all four end, once.
    let later = now_ms() + rapport_core::recordings::SESSION_IDLE_MS + 1_000;
    assert_eq!(app.services.end_quiet_recordings(later, 100).await.unwrap(), 4);
    assert_eq!(app.services.end_quiet_recordings(later, 100).await.unwrap(), 0);
    assert!(
        !app.services.end_recording(&tenant, &browsed, later).await.unwrap(),
        "a session ends once, however many instances try"
    );

    let listed = ok_json(
        app.post("/rest/v1/session/recorded", &t, json!({"pageable": {"pageSize": 10}}))
            .await,
        StatusCode::OK,
    )
    .await;
    let reason_of = |id: &str| {
        listed["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .map(|s| s["reason"].clone())
            .unwrap()
    };
    assert_eq!(reason_of(&browsed), "BROWSE");
    assert_eq!(reason_of(&chatted), "CHAT");
    assert_eq!(reason_of(&watched), "LIVE_VIEW");
    assert_eq!(reason_of(&erred), "ERROR");

    // The viewer hears that the session ended; a new viewer hears only that.
    read_until(&mut viewer, "event: ended", WAIT).await;
    let mut late = app
        .request(Method::GET, &format!("/sessions/{watched}/live"))
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    read_until(&mut late, "event: ended", WAIT).await;

    // An ended session takes no more batches: the script starts a new one.
    let more = json!({"seq": 1, "events": [{"type": 3, "timestamp": now_ms()}]});
    let refused = append(&app, &key, &browsed, &browsed_token, &more, false).await;
    expect_problem(refused, StatusCode::UNAUTHORIZED, "invalid_recording").await;

    // The session-reason report counts each once, by reason.
    let body = json!({"metrics": [{"metricName": "SESSIONS"}], "dateFilter": {"grouping": "TODAY"}});
    let report = ok_json(
        app.post("/rest/v1/report/session/reason", &t, body).await,
        StatusCode::OK,
    )
    .await;
    let total = |report: &Value, reason: &str| -> i64 {
        report["results"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|bucket| bucket[reason].as_str())
            .map(|n| n.parse::<i64>().unwrap())
            .sum()
    };
    for reason in ["BROWSE", "CHAT", "LIVE_VIEW", "ERROR"] {
        assert_eq!(total(&report, reason), 1, "{reason}: {report}");
    }
    app.stop().await;
}

backend_tests!(quiet_sessions_end_with_their_reason,);
