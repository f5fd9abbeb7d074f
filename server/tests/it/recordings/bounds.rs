//! A session's and a workspace's day's bounds on stored bytes, which only the
//! platform sets: the batch past a bound is refused, what was stored replays.

use rapport_core::{backend_tests, recordings::gunzip, testing::TestDb, time::now_ms};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use super::{append, start};
use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

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

backend_tests!(a_session_and_a_workspace_keep_no_more_than_their_bounds,);
