//! Universal co-browsing: the links' sockets drive a real Chromium, with
//! control hand-over, refusals, the session bound, relaying between instances
//! and the universal co-browse report.

use std::time::Duration;

use futures_util::StreamExt;
use rapport_core::{backend_tests, db::Backend, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use super::{audit_actions, connect, next_of, red_site, report, say, sum, Socket, WAIT};
use crate::utils::{ok_json, TestApp};

/// Waits for a JPEG frame.
async fn next_frame(socket: &mut Socket) -> Vec<u8> {
    tokio::time::timeout(WAIT, async {
        loop {
            if let Some(Ok(Message::Binary(jpeg))) = socket.next().await {
                return jpeg.to_vec();
            }
        }
    })
    .await
    .expect("a frame")
}

/// Waits for the notice `code` (other notices skipped).
async fn notice(socket: &mut Socket, code: &str) -> Value {
    loop {
        let notice = next_of(socket, "notice").await;
        if notice["code"] == code {
            return notice;
        }
    }
}

async fn universal_cobrowsing_runs_a_real_browser(db: TestDb) {
    // One session at a time here, so the bound shows.
    let app = TestApp::start_with(db, |c| {
        c.cobrowse.max_sessions = 1;
        c.webhooks.allow_private_networks = "127.0.0.0/8".parse().unwrap();
    })
    .await;
    let ready = ok_json(app.request(Method::GET, "/ready").send().await.unwrap(), StatusCode::OK).await;
    assert_eq!(
        ready["cobrowsing"]["available"], true,
        "Chromium is installed for the tests: {ready}"
    );
    let (tenant, t) = app.tenant_with_key("Browse").await;
    app.user(&tenant, "host@browse.example", Role::Agent, false).await;
    let site = red_site().await;
    let links = ok_json(
        app.post(
            "/rest/v1/cobrowsing/link",
            &t,
            json!({"url": site, "userEmail": "host@browse.example"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let (host_link, join_link) = (
        links["hostLink"].as_str().unwrap().to_string(),
        links["joinLink"].as_str().unwrap().to_string(),
    );

    // The host starts the browser at the page, and holds control.
    let mut host = connect(&app, &host_link).await;
    let welcome = next_of(&mut host, "welcome").await;
    assert_eq!(welcome["role"], "host");
    assert_eq!(welcome["viewport"], json!({"width": 1280, "height": 720}));
    let host_id = welcome["you"].as_str().unwrap().to_string();
    let state = next_of(&mut host, "state").await;
    assert_eq!(state["control"], host_id.as_str());
    let jpeg = next_frame(&mut host).await;
    assert_eq!(&jpeg[..2], &[0xff, 0xd8], "a JPEG frame");

    // A guest joins, through another instance on PostgreSQL: it is relayed to
    // the instance that runs the browser.
    let other = match app.services.db().backend() {
        Backend::Postgres => Some(app.another_instance().await),
        Backend::Sqlite => None,
    };
    let mut guest = connect(other.as_ref().unwrap_or(&app), &join_link).await;
    let welcome = next_of(&mut guest, "welcome").await;
    assert_eq!(welcome["role"], "guest");
    let guest_id = welcome["you"].as_str().unwrap().to_string();
    next_frame(&mut guest).await;
    let state = next_of(&mut guest, "state").await;
    assert_eq!(state["participants"].as_array().unwrap().len(), 2, "{state}");

    // Without control the guest's input is refused; the host hands it over.
    say(&mut guest, json!({"type": "navigate", "url": site})).await;
    assert_eq!(next_of(&mut guest, "notice").await["code"], "not_in_control");
    say(&mut host, json!({"type": "control", "to": guest_id})).await;
    loop {
        if next_of(&mut guest, "state").await["control"] == guest_id.as_str() {
            break;
        }
    }
    // The metadata address is refused, after its lookup.
    say(
        &mut guest,
        json!({"type": "navigate", "url": "http://169.254.169.254/latest/meta-data/"}),
    )
    .await;
    let refused = next_of(&mut guest, "notice").await;
    assert_eq!(refused["code"], "navigation_refused", "{refused}");

    // A file picker and a download are refused, and everyone is told.
    say(&mut guest, json!({"type": "navigate", "url": format!("{site}form")})).await;
    loop {
        let state = next_of(&mut guest, "state").await;
        if state["title"] == "Form" && state["loading"] == false {
            break;
        }
    }
    for event in ["mousePressed", "mouseReleased"] {
        let click = json!({"type": "mouse", "event": event, "x": 640, "y": 360, "button": "left", "clickCount": 1});
        say(&mut guest, click).await;
    }
    notice(&mut guest, "file_picker_refused").await;
    notice(&mut host, "file_picker_refused").await;
    say(
        &mut guest,
        json!({"type": "navigate", "url": format!("{site}report.pdf")}),
    )
    .await;
    let download = notice(&mut host, "download_refused").await;
    assert!(
        download["message"].as_str().unwrap().contains("report.pdf"),
        "{download}"
    );

    // A second session does not start while this one runs.
    let second = ok_json(
        app.post("/rest/v1/cobrowsing/link", &t, json!({"url": site})).await,
        StatusCode::CREATED,
    )
    .await;
    let mut busy = connect(&app, second["joinLink"].as_str().unwrap()).await;
    assert_eq!(next_of(&mut busy, "error").await["code"], "busy");

    // The host ends it: everyone hears why, and the links stop working.
    say(&mut host, json!({"type": "end"})).await;
    assert_eq!(next_of(&mut guest, "ended").await["reason"], "ended_by_host");
    assert_eq!(next_of(&mut host, "ended").await["reason"], "ended_by_host");
    let mut late = connect(&app, &join_link).await;
    assert_eq!(next_of(&mut late, "error").await["code"], "invalid_link");

    // A session ends when its links do: the second link, made to expire a few
    // seconds after its session starts, ends that session as expired.
    // (The first session's place frees as its browser closes: busy until then,
    // which on a slow machine can take longer than those few seconds. So the
    // expiry is set again before each try, counted from that try.)
    let mut expiring = None;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while std::time::Instant::now() < deadline {
        rapport_core::with_db!(app.services.writer(), |pool| sqlx::query(
            "update cobrowse_sessions set expires_at = $1 where id = $2"
        )
        .bind(rapport_core::time::now_ms() + 6_000)
        .bind(second["sessionId"].as_str().unwrap())
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))
        .unwrap();
        let mut socket = connect(&app, second["joinLink"].as_str().unwrap()).await;
        // Refused while busy: an `error` frame, or (when the refusal races the
        // first session's close) the socket simply ends. Either way, try again.
        let welcomed = tokio::time::timeout(WAIT, async {
            while let Some(Ok(frame)) = socket.next().await {
                if let Message::Text(text) = frame {
                    let value: Value = serde_json::from_str(text.as_str()).unwrap();
                    match value["type"].as_str() {
                        Some("welcome") => return true,
                        Some("error") => return false,
                        _ => {}
                    }
                }
            }
            false
        })
        .await
        .unwrap_or(false);
        if welcomed {
            expiring = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut expiring = expiring.expect("the second session starts once the first is gone");
    assert_eq!(next_of(&mut expiring, "ended").await["reason"], "expired");

    // The universal co-browse report counts the sessions, their guests and
    // the hand-over; joins, the hand-over and the end are audited.
    let mut counted = Value::Null;
    for _ in 0..50 {
        counted = report(
            &app,
            &t,
            "/rest/v1/report/cobrowse/universal",
            &["COBROWSE_SESSIONS", "COBROWSE_PARTICIPANTS", "CONTROL_HANDOVERS"],
        )
        .await;
        if sum(&counted, "COBROWSE_SESSIONS") == 2.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Both sessions, each with its one guest; the one hand-over.
    assert_eq!(sum(&counted, "COBROWSE_SESSIONS"), 2.0, "{counted}");
    assert_eq!(sum(&counted, "COBROWSE_PARTICIPANTS"), 2.0, "{counted}");
    assert_eq!(sum(&counted, "CONTROL_HANDOVERS"), 1.0, "{counted}");
    let audit = audit_actions(&app, &t).await;
    for action in ["cobrowse.join", "cobrowse.control", "cobrowse.end"] {
        assert!(audit.contains(action), "{action} audited: {audit}");
    }
    if let Some(other) = other {
        other.stop().await;
    }
    app.stop().await;
}

backend_tests!(universal_cobrowsing_runs_a_real_browser);
