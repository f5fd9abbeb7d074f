//! Session recording over HTTP, on both backends: the visitor script starts a
//! recording and appends batches (plain or gzip, a retry stored once) that only
//! its write token may append; the replay reads them back in order; the
//! workspace's settings switch recording off and say what to mask; a live
//! viewer makes the script's control stream ask for a snapshot and hears each
//! batch as it is stored, through another instance too; retention deletes old
//! recordings.

use std::time::Duration;

use rapport_core::{
    backend_tests,
    db::Backend,
    model::Role,
    recordings::{gunzip, gzip},
    testing::TestDb,
    time::now_ms,
    with_db,
};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::session,
    utils::{expect_problem, fields, ok_json, read_until, send, TestApp},
};

const WAIT: Duration = Duration::from_secs(20);

/// Starts a recording: `(session id, write token)`.
async fn start(app: &TestApp, key: &str, body: Value) -> (String, String) {
    let started = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let started = ok_json(started, StatusCode::CREATED).await;
    assert_eq!(started["watched"], false);
    (
        started["sessionId"].as_str().unwrap().to_string(),
        started["writeToken"].as_str().unwrap().to_string(),
    )
}

/// Appends a batch, gzip-compressed or not.
async fn append(app: &TestApp, key: &str, id: &str, token: &str, body: &Value, compressed: bool) -> reqwest::Response {
    let json = serde_json::to_vec(body).unwrap();
    let mut request = app
        .request(Method::POST, &format!("/rest/v1/widget/recording/{id}/events"))
        .header("rapport-widget-key", key)
        .header(header::CONTENT_TYPE, "application/json")
        .bearer_auth(token);
    request = if compressed {
        request
            .header(header::CONTENT_ENCODING, "gzip")
            .body(gzip(&json).unwrap())
    } else {
        request.body(json)
    };
    request.send().await.unwrap()
}

fn page_event(at: i64, href: &str) -> Value {
    json!({"type": 4, "timestamp": at, "data": {"href": href, "width": 1280, "height": 800}})
}

async fn the_script_records_sessions_that_replay(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Shop").await;
    let (_, other) = app.tenant_with_key("Other").await;
    let key = app.widget_key(&t).await;
    let other_key = app.widget_key(&other).await;
    let config = ok_json(
        app.request(Method::GET, "/rest/v1/widget/config")
            .header("rapport-widget-key", &key)
            .send()
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        config["recording"],
        json!({"enabled": true, "requireConsent": false, "maskSelector": null, "blockSelector": null}),
        "recording is on by default, every input masked by the script"
    );

    let bad = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", &key)
        .json(&json!({"url": "javascript:alert(1)"}))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["visitorId", "url"]);
    let (id, token) = start(
        &app,
        &key,
        json!({"visitorId": "v-1", "url": "https://shop.example/", "tags": ["vip"]}),
    )
    .await;

    let t0 = now_ms();
    let first = json!({"seq": 0, "events": [page_event(t0, "https://shop.example/"), {"type": 2, "timestamp": t0 + 1, "data": {"node": {}}}]});
    let ack = ok_json(append(&app, &key, &id, &token, &first, false).await, StatusCode::OK).await;
    assert_eq!(ack, json!({"watched": false}));
    let second = json!({"seq": 1, "events": [{"type": 3, "timestamp": t0 + 500, "data": {"source": 5, "text": "*****"}}], "tags": ["vip", "returning"]});
    ok_json(append(&app, &key, &id, &token, &second, true).await, StatusCode::OK).await;
    // A retry of the same batch is stored once.
    ok_json(append(&app, &key, &id, &token, &second, true).await, StatusCode::OK).await;

    // Only the write token, with the session's own widget key, appends.
    let wrong_token = append(&app, &key, &id, "rw_nope", &second, false).await;
    expect_problem(wrong_token, StatusCode::UNAUTHORIZED, "invalid_recording").await;
    let wrong_key = append(&app, &other_key, &id, &token, &second, false).await;
    expect_problem(wrong_key, StatusCode::UNAUTHORIZED, "invalid_recording").await;
    let bad_event = append(
        &app,
        &key,
        &id,
        &token,
        &json!({"seq": 2, "events": [{"type": "x"}]}),
        false,
    )
    .await;
    let problem = expect_problem(bad_event, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["events[0]"]);
    let long_token = json!({"seq": 2, "events": [], "visitorToken": format!("vt_{}", "x".repeat(198))});
    let problem = expect_problem(
        append(&app, &key, &id, &token, &long_token, false).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), ["visitorToken"]);
    let damaged = app
        .request(Method::POST, &format!("/rest/v1/widget/recording/{id}/events"))
        .header("rapport-widget-key", &key)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, "gzip")
        .bearer_auth(&token)
        .body("not gzip")
        .send()
        .await
        .unwrap();
    expect_problem(damaged, StatusCode::BAD_REQUEST, "unreadable_body").await;
    // Small as sent, over 8 MiB once inflated: too large, not damaged.
    let bomb = app
        .request(Method::POST, &format!("/rest/v1/widget/recording/{id}/events"))
        .header("rapport-widget-key", &key)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, "gzip")
        .bearer_auth(&token)
        .body(gzip(&vec![b' '; 9 * 1024 * 1024]).unwrap())
        .send()
        .await
        .unwrap();
    expect_problem(bomb, StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large").await;
    let brotli = app
        .request(Method::POST, &format!("/rest/v1/widget/recording/{id}/events"))
        .header("rapport-widget-key", &key)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::CONTENT_ENCODING, "br")
        .bearer_auth(&token)
        .body("{}")
        .send()
        .await
        .unwrap();
    expect_problem(brotli, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_encoding").await;

    // The replay: every event once, in order.
    let events = ok_json(
        app.get(&format!("/rest/v1/session/{id}/events"), &t).await,
        StatusCode::OK,
    )
    .await;
    let types: Vec<i64> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_i64().unwrap())
        .collect();
    assert_eq!(types, [4, 2, 3]);
    assert_eq!(events[2]["data"]["text"], "*****");
    let theirs = app.get(&format!("/rest/v1/session/{id}/events"), &other).await;
    expect_problem(theirs, StatusCode::NOT_FOUND, "not_found").await;

    // The session is listed with its pages and the tags the script sent last.
    let listed = ok_json(
        app.post(
            "/rest/v1/session/recorded",
            &t,
            json!({"tagFilter": {"tagsFilter": ["returning"]}, "pageable": {"pageSize": 10}}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let session = &listed["results"][0];
    assert_eq!(session["id"], id.as_str());
    assert_eq!(session["visitorId"], "v-1");
    assert_eq!(session["entryUrl"], "https://shop.example/");
    assert_eq!(session["pageCount"], 1);
    assert_eq!(session["tags"], json!(["returning", "vip"]));
    assert!(session["recordedBytes"].as_i64().unwrap() > 0, "{session}");
    assert_eq!(
        chrono::DateTime::parse_from_rfc3339(session["endedAt"].as_str().unwrap())
            .unwrap()
            .timestamp_millis(),
        t0 + 500,
        "the session lasts until its last event"
    );

    // The workspace's settings: checked, then recording off.
    let refused = send(
        &app,
        Method::PUT,
        "/rest/v1/workspace/recording",
        &t,
        Some(json!({"maskSelector": "a { color: red }", "retentionDays": 0})),
    )
    .await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["maskSelector", "retentionDays"]);
    let set = ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace/recording",
            &t,
            Some(json!({"enabled": false, "maskSelector": ".price, #account", "retentionDays": 7})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        set,
        json!({"enabled": false, "requireConsent": false, "maskSelector": ".price, #account", "blockSelector": null,
            "retentionDays": 7, "conferenceRetentionDays": 90})
    );
    assert_eq!(
        ok_json(app.get("/rest/v1/workspace/recording", &t).await, StatusCode::OK).await,
        set
    );
    let off = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", &key)
        .json(&json!({"visitorId": "v-2"}))
        .send()
        .await
        .unwrap();
    expect_problem(off, StatusCode::FORBIDDEN, "recording_off").await;

    // Retention: a recording older than the workspace's days goes, events and all.
    let services = &app.services;
    let eight_days_ago = now_ms() - 8 * 86_400_000;
    with_db!(services.writer(), |pool| sqlx::query(
        "update recorded_sessions set started_at = $2, ended_at = $2 where id = $1"
    )
    .bind(&id)
    .bind(eight_days_ago)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    assert_eq!(services.prune_recordings(now_ms(), 100).await.unwrap(), 1);
    let chunks: i64 = with_db!(services.db(), |pool| sqlx::query_scalar(
        "select count(*) from recording_chunks where session_id = $1"
    )
    .bind(&id)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(chunks, 0);
}

async fn a_live_viewer_sees_each_batch_as_it_is_stored(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Live").await;
    let (other_tenant, _) = app.tenant_with_key("Elsewhere").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "agent@live.example", Role::Agent, false).await;
    app.user(&other_tenant, "agent@elsewhere.example", Role::Agent, false)
        .await;
    let agent = session(&app, "agent@live.example").await;
    let stranger = session(&app, "agent@elsewhere.example").await;
    let (id, token) = start(&app, &key, json!({"visitorId": "v-9", "url": "https://shop.example/"})).await;
    let path = format!("/sessions/{id}/live");

    // Nobody but the tenant's agents (or a live-view grant) may watch.
    let anonymous = app.request(Method::GET, &path).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let theirs = app
        .request(Method::GET, &path)
        .header(header::COOKIE, &stranger)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);

    // The script's control stream says nobody watches yet.
    let mut control = app
        .request(Method::GET, &format!("/rest/v1/widget/recording/{id}/control"))
        .header("rapport-widget-key", &key)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(control.status(), StatusCode::OK);
    read_until(&mut control, r#"{"watched":false}"#, WAIT).await;

    // With PostgreSQL the viewer watches through another instance.
    let viewer_app = match app.services.db().backend() {
        Backend::Postgres => Some(app.another_instance().await),
        Backend::Sqlite => None,
    };
    let through = viewer_app.as_ref().unwrap_or(&app);
    let mut viewer = through
        .request(Method::GET, &path)
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(viewer.status(), StatusCode::OK);
    read_until(&mut control, r#""snapshot":true"#, WAIT).await;
    let batch = json!({"seq": 0, "events": [{"type": 2, "timestamp": now_ms(), "data": {"text": "typed-x"}}]});
    let ack = ok_json(append(&app, &key, &id, &token, &batch, true).await, StatusCode::OK).await;
    assert_eq!(ack["watched"], true, "the script learns someone watches");
    let seen = read_until(&mut viewer, "typed-x", WAIT).await;
    assert!(seen.contains("event: events"), "{seen}");

    // The replay reads the same, for agents only.
    let events = app
        .request(Method::GET, &format!("/sessions/{id}/events"))
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(events, StatusCode::OK).await[0]["data"]["text"], "typed-x");
    let events = app
        .request(Method::GET, &format!("/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::UNAUTHORIZED);
    drop(viewer);
    if let Some(other) = viewer_app {
        other.stop().await;
    }
}

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

/// A batch of one event carrying `chars` characters of text: it inflates to a
/// little more than that, and compresses to almost nothing (as a bomb does).
fn heavy_batch(seq: i64, chars: usize) -> Value {
    json!({"seq": seq, "events": [{"type": 3, "timestamp": now_ms(), "data": {"source": 0, "text": "x".repeat(chars)}}]})
}

/// The replay of a session, parsed: its events.
async fn replay(app: &TestApp, token: &str, id: &str) -> Vec<Value> {
    let events = ok_json(
        app.get(&format!("/rest/v1/session/{id}/events"), token).await,
        StatusCode::OK,
    )
    .await;
    events.as_array().unwrap().clone()
}

async fn a_session_and_a_workspace_keep_no_more_than_their_bounds(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Shop").await;
    let (_, neighbour) = app.tenant_with_key("Neighbour").await;
    let platform = app.platform_key().await;
    let key = app.widget_key(&t).await;
    let neighbour_key = app.widget_key(&neighbour).await;
    let limits_path = format!("/rest/v1/tenant/{tenant}/limits");

    // The defaults fit a real site; only the platform sets a tenant's own.
    let defaults = ok_json(app.get(&limits_path, &platform).await, StatusCode::OK).await;
    assert_eq!(
        defaults,
        json!({"recordingSessionBytes": 64 << 20, "recordingDayBytes": 8_i64 << 30, "fileBytes": 10_i64 << 30, "mailsPerDay": 2000,
            "visitorsPerMinute": 1200, "openStreams": 2000, "cobrowseSessions": 2, "cobrowseParticipants": 8})
    );
    let own_raise = send(
        &app,
        Method::PUT,
        &limits_path,
        &t,
        Some(json!({"recordingDayBytes": 1_i64 << 40})),
    )
    .await;
    expect_problem(own_raise, StatusCode::FORBIDDEN, "tenant_key_not_allowed").await;
    let out_of_range = send(
        &app,
        Method::PUT,
        &limits_path,
        &platform,
        Some(json!({"recordingSessionBytes": 10})),
    )
    .await;
    let problem = expect_problem(out_of_range, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["recordingSessionBytes"]);
    let mib = 1_i64 << 20;
    let set = send(
        &app,
        Method::PUT,
        &limits_path,
        &platform,
        Some(json!({"recordingSessionBytes": mib, "recordingDayBytes": 3 * mib})),
    )
    .await;
    assert_eq!(
        ok_json(set, StatusCode::OK).await,
        json!({"recordingSessionBytes": mib, "recordingDayBytes": 3 * mib, "fileBytes": 10_i64 << 30, "mailsPerDay": 2000,
            "visitorsPerMinute": 1200, "openStreams": 2000, "cobrowseSessions": 2, "cobrowseParticipants": 8})
    );

    // A session takes batches until the next would pass its bound: that one is
    // refused, and what was stored replays as before. Each batch is 400 kB of
    // events in a few hundred bytes of gzip.
    let visitor = json!({"visitorId": "v-1", "url": "https://shop.example/"});
    let (first, token) = start(&app, &key, visitor.clone()).await;
    for seq in 0..2 {
        ok_json(
            append(&app, &key, &first, &token, &heavy_batch(seq, 400_000), true).await,
            StatusCode::OK,
        )
        .await;
    }
    let full = append(&app, &key, &first, &token, &heavy_batch(2, 400_000), true).await;
    let problem = expect_problem(full, StatusCode::PAYLOAD_TOO_LARGE, "recording_session_full").await;
    assert!(
        problem["detail"].as_str().unwrap().contains(&mib.to_string()),
        "{problem}"
    );
    assert_eq!(
        replay(&app, &t, &first).await.len(),
        2,
        "the stored batches stay readable"
    );
    // The replay streams, compressed too (a compressing body reads its stream
    // to the end and once more).
    let compressed = app
        .request(Method::GET, &format!("/rest/v1/session/{first}/events"))
        .bearer_auth(&t)
        .header(header::ACCEPT_ENCODING, "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(compressed.status(), StatusCode::OK);
    assert_eq!(compressed.headers()[header::CONTENT_ENCODING], "gzip");
    let packed = compressed.bytes().await.expect("the whole replay arrives");
    let events: Vec<Value> = serde_json::from_slice(&gunzip(&packed, 4 << 20).unwrap()).unwrap();
    assert_eq!(events.len(), 2);
    let small = json!({"seq": 3, "events": [{"type": 3, "timestamp": now_ms(), "data": {}}]});
    ok_json(append(&app, &key, &first, &token, &small, false).await, StatusCode::OK).await;

    // The workspace's day: 3 MiB across all its sessions. Two more sessions of
    // 800 kB each, then the fourth session's second batch passes it.
    for _ in 0..2 {
        let (id, token) = start(&app, &key, visitor.clone()).await;
        for seq in 0..2 {
            ok_json(
                append(&app, &key, &id, &token, &heavy_batch(seq, 400_000), true).await,
                StatusCode::OK,
            )
            .await;
        }
    }
    let (last, token) = start(&app, &key, visitor.clone()).await;
    ok_json(
        append(&app, &key, &last, &token, &heavy_batch(0, 400_000), true).await,
        StatusCode::OK,
    )
    .await;
    let spent = append(&app, &key, &last, &token, &heavy_batch(1, 400_000), true).await;
    let retry_after: u64 = spent.headers()[header::RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry_after), "until midnight UTC: {retry_after}");
    expect_problem(spent, StatusCode::TOO_MANY_REQUESTS, "recording_allowance_spent").await;
    assert_eq!(replay(&app, &t, &last).await.len(), 1);

    // Another workspace's visitors record as before.
    let (theirs, token) = start(&app, &neighbour_key, visitor.clone()).await;
    ok_json(
        append(&app, &neighbour_key, &theirs, &token, &heavy_batch(0, 400_000), true).await,
        StatusCode::OK,
    )
    .await;

    // `null` returns a bound to its default, and the shop records again.
    let reset = send(
        &app,
        Method::PUT,
        &limits_path,
        &platform,
        Some(json!({"recordingDayBytes": null})),
    )
    .await;
    assert_eq!(
        ok_json(reset, StatusCode::OK).await,
        json!({"recordingSessionBytes": mib, "recordingDayBytes": 8_i64 << 30, "fileBytes": 10_i64 << 30, "mailsPerDay": 2000, "visitorsPerMinute": 1200,
            "openStreams": 2000, "cobrowseSessions": 2, "cobrowseParticipants": 8})
    );
    let (again, token) = start(&app, &key, visitor).await;
    ok_json(
        append(&app, &key, &again, &token, &heavy_batch(0, 400_000), true).await,
        StatusCode::OK,
    )
    .await;
    app.stop().await;
}

backend_tests!(
    the_script_records_sessions_that_replay,
    a_session_and_a_workspace_keep_no_more_than_their_bounds,
    a_live_viewer_sees_each_batch_as_it_is_stored,
    quiet_sessions_end_with_their_reason,
);
