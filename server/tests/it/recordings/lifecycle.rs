//! A recording from the visitor script to the replay: batches plain or gzip (a
//! retry stored once) that only the write token may append, the replay in
//! order, the listing, the workspace's settings, and retention.

use rapport_core::{backend_tests, recordings::gzip, testing::TestDb, time::now_ms, with_db};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use super::{append, start};
use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

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

backend_tests!(the_script_records_sessions_that_replay,);
