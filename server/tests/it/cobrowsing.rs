//! Co-browsing over HTTP and WebSocket, on both backends.
//!
//! - Script co-browsing: an agent asks through the live view, the visitor
//!   script hears it on its control stream and accepts, grants and ends; what
//!   the agent may do follows the visitor's answers; another tenant's agent
//!   and anonymous callers get nothing; the report counts it and it is audited.
//!   It ends when the agent's live view is gone for good and when the
//!   visitor's session ends.
//! - Universal co-browsing: the links' sockets drive a real Chromium (the one
//!   the tests install): frames arrive, control changes hands, a private
//!   address is refused, a file picker and a download are refused, the bound on
//!   sessions holds, a guest reaching another instance is relayed to the one
//!   running the browser, a session ends with its links, and the sessions'
//!   ends feed the universal co-browse report.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rapport_core::{backend_tests, db::Backend, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_tungstenite::{tungstenite::Message, MaybeTlsStream, WebSocketStream};

use crate::{
    dashboard::session,
    utils::{expect_problem, ok_json, read_until, TestApp},
};

const WAIT: Duration = Duration::from_secs(20);

/// Sums a metric over a report's buckets.
fn sum(report: &Value, name: &str) -> f64 {
    report["results"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|bucket| bucket[name].as_str())
        .map(|n| n.parse::<f64>().unwrap())
        .sum()
}

async fn report(app: &TestApp, token: &str, path: &str, metrics: &[&str]) -> Value {
    let metrics: Vec<Value> = metrics.iter().map(|m| json!({"metricName": m})).collect();
    let body = json!({"metrics": metrics, "dateFilter": {"grouping": "TODAY"}});
    ok_json(app.post(path, token, body).await, StatusCode::OK).await
}

async fn audit_actions(app: &TestApp, token: &str) -> String {
    ok_json(app.get("/rest/v1/audit?pageSize=100", token).await, StatusCode::OK)
        .await
        .to_string()
}

async fn agent_says(app: &TestApp, cookie: &str, id: &str, body: Value) -> reqwest::Response {
    app.request(Method::POST, &format!("/sessions/{id}/cobrowse"))
        .header(header::COOKIE, cookie)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn visitor_says(app: &TestApp, key: &str, id: &str, token: &str, action: &str) -> reqwest::Response {
    app.request(Method::POST, &format!("/rest/v1/widget/recording/{id}/cobrowse"))
        .header("rapport-widget-key", key)
        .bearer_auth(token)
        .json(&json!({"type": action}))
        .send()
        .await
        .unwrap()
}

async fn control_stream(app: &TestApp, key: &str, id: &str, token: &str) -> reqwest::Response {
    let control = app
        .request(Method::GET, &format!("/rest/v1/widget/recording/{id}/control"))
        .header("rapport-widget-key", key)
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(control.status(), StatusCode::OK);
    control
}

/// A visitor's recorded session: its id and write token.
async fn recorded_visit(app: &TestApp, key: &str) -> (String, String) {
    let started = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", key)
        .json(&json!({"visitorId": "v-1", "url": "https://shop.example/", "tags": ["vip"]}))
        .send()
        .await
        .unwrap();
    let started = ok_json(started, StatusCode::CREATED).await;
    let id = started["sessionId"].as_str().unwrap().to_string();
    let token = started["writeToken"].as_str().unwrap().to_string();
    (id, token)
}

/// The live view of a session, as the agent's dashboard opens it.
async fn live_view(app: &TestApp, cookie: &str, id: &str) -> reqwest::Response {
    let viewer = app
        .request(Method::GET, &format!("/sessions/{id}/live"))
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(viewer.status(), StatusCode::OK);
    viewer
}

async fn script_cobrowsing_follows_the_visitor(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Shop").await;
    let (other_tenant, _) = app.tenant_with_key("Elsewhere").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "ada@shop.example", Role::Agent, false).await;
    app.user(&other_tenant, "eve@elsewhere.example", Role::Agent, false)
        .await;
    app.user(&tenant, "bob@shop.example", Role::Agent, false).await;
    let agent = session(&app, "ada@shop.example").await;
    let colleague = session(&app, "bob@shop.example").await;
    let stranger = session(&app, "eve@elsewhere.example").await;
    let (id, token) = recorded_visit(&app, &key).await;
    let mut control = control_stream(&app, &key, &id, &token).await;
    read_until(&mut control, "watched", WAIT).await;

    // Nothing goes on yet; strangers and anonymous callers get nothing.
    let early = agent_says(&app, &agent, &id, json!({"type": "pointer", "x": 1, "y": 2})).await;
    expect_problem(early, StatusCode::CONFLICT, "not_active").await;
    let theirs = agent_says(&app, &stranger, &id, json!({"type": "request"})).await;
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);
    let anonymous = app
        .request(Method::POST, &format!("/sessions/{id}/cobrowse"))
        .json(&json!({"type": "request"}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let unknown = visitor_says(&app, &key, &id, &token, "accept").await;
    expect_problem(unknown, StatusCode::CONFLICT, "not_active").await;

    // The agent watches, through another instance on PostgreSQL, and asks.
    let other = match app.services.db().backend() {
        Backend::Postgres => Some(app.another_instance().await),
        Backend::Sqlite => None,
    };
    let through = other.as_ref().unwrap_or(&app);
    let mut viewer = live_view(through, &agent, &id).await;
    let asked = agent_says(through, &agent, &id, json!({"type": "request"})).await;
    assert_eq!(asked.status(), StatusCode::NO_CONTENT);
    let heard = read_until(&mut control, r#""type":"request""#, WAIT).await;
    assert!(
        heard.contains("event: cobrowse") && heard.contains("ada@shop.example"),
        "{heard}"
    );
    read_until(&mut viewer, r#""state":"requested""#, WAIT).await;

    // The visitor accepts: the agent's pointer reaches the page, but clicks
    // wait for the visitor's leave.
    assert_eq!(
        visitor_says(&app, &key, &id, &token, "accept").await.status(),
        StatusCode::NO_CONTENT
    );
    let active = read_until(&mut viewer, r#""state":"active""#, WAIT).await;
    assert!(active.contains(r#""control":false"#), "{active}");
    let pointer = agent_says(through, &agent, &id, json!({"type": "pointer", "x": 120.5, "y": 40})).await;
    assert_eq!(pointer.status(), StatusCode::NO_CONTENT);
    read_until(&mut control, r#""type":"pointer","x":120.5"#, WAIT).await;
    let click = agent_says(through, &agent, &id, json!({"type": "click", "x": 10, "y": 10})).await;
    expect_problem(click, StatusCode::CONFLICT, "no_control").await;
    let typed = agent_says(through, &agent, &id, json!({"type": "type", "text": "hello"})).await;
    expect_problem(typed, StatusCode::CONFLICT, "no_control").await;
    // The visitor accepted Ada, not any agent: another is refused, and acts
    // on nothing.
    let busy = agent_says(&app, &colleague, &id, json!({"type": "request"})).await;
    let problem = expect_problem(busy, StatusCode::CONFLICT, "cobrowse_busy").await;
    assert!(problem.to_string().contains("ada@shop.example"), "{problem}");
    let theirs = agent_says(&app, &colleague, &id, json!({"type": "pointer", "x": 1, "y": 1})).await;
    expect_problem(theirs, StatusCode::CONFLICT, "not_active").await;
    let bad = agent_says(through, &agent, &id, json!({"type": "click", "x": "left"})).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let odd = visitor_says(&app, &key, &id, &token, "dance").await;
    assert_eq!(odd.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // With control granted, a click and typing reach the page.
    assert_eq!(
        visitor_says(&app, &key, &id, &token, "grant").await.status(),
        StatusCode::NO_CONTENT
    );
    read_until(&mut viewer, r#""control":true"#, WAIT).await;
    let click = agent_says(through, &agent, &id, json!({"type": "click", "x": 10, "y": 20})).await;
    assert_eq!(click.status(), StatusCode::NO_CONTENT);
    read_until(&mut control, r#""type":"click""#, WAIT).await;
    let typed = agent_says(through, &agent, &id, json!({"type": "type", "text": "hello"})).await;
    assert_eq!(typed.status(), StatusCode::NO_CONTENT);
    read_until(&mut control, r#""text":"hello""#, WAIT).await;

    // The visitor's next page carries on where it stands.
    let mut next_page = control_stream(&app, &key, &id, &token).await;
    let resumed = read_until(&mut next_page, r#""type":"active""#, WAIT).await;
    assert!(resumed.contains(r#""control":true"#), "{resumed}");

    // The visitor ends it: both sides hear so, and the agent can no longer act.
    assert_eq!(
        visitor_says(&app, &key, &id, &token, "end").await.status(),
        StatusCode::NO_CONTENT
    );
    read_until(&mut control, r#""by":"visitor""#, WAIT).await;
    read_until(&mut viewer, r#""state":"ended""#, WAIT).await;
    let late = agent_says(through, &agent, &id, json!({"type": "pointer", "x": 1, "y": 1})).await;
    expect_problem(late, StatusCode::CONFLICT, "not_active").await;

    // The co-browse report counts it, with its hand-over; it is audited.
    let counted = report(
        &app,
        &t,
        "/rest/v1/report/cobrowse",
        &["COBROWSE_SESSIONS", "COBROWSE_PARTICIPANTS", "CONTROL_HANDOVERS"],
    )
    .await;
    assert_eq!(sum(&counted, "COBROWSE_SESSIONS"), 1.0, "{counted}");
    assert_eq!(sum(&counted, "COBROWSE_PARTICIPANTS"), 1.0, "{counted}");
    assert_eq!(sum(&counted, "CONTROL_HANDOVERS"), 1.0, "{counted}");
    // It carries the tags of the visitor's session.
    for (tags, expected) in [(json!({"all": ["vip"]}), 1.0), (json!({"all": ["trial"]}), 0.0)] {
        let body = json!({
            "metrics": [{"metricName": "COBROWSE_SESSIONS", "tags": tags}],
            "dateFilter": {"grouping": "TODAY"},
        });
        let filtered = ok_json(app.post("/rest/v1/report/cobrowse", &t, body).await, StatusCode::OK).await;
        assert_eq!(sum(&filtered, "COBROWSE_SESSIONS"), expected, "{tags}: {filtered}");
    }
    let audit = audit_actions(&app, &t).await;
    for action in [
        "cobrowse.request",
        "cobrowse.accept",
        "cobrowse.control",
        "cobrowse.end",
    ] {
        assert!(audit.contains(action), "{action} audited: {audit}");
    }
    drop(viewer);
    if let Some(other) = other {
        other.stop().await;
    }
}

/// The agent asks to co-browse and the visitor accepts.
async fn ask_and_accept(app: &TestApp, agent: &str, key: &str, id: &str, token: &str) {
    let asked = agent_says(app, agent, id, json!({"type": "request"})).await;
    assert_eq!(asked.status(), StatusCode::NO_CONTENT);
    let accepted = visitor_says(app, key, id, token, "accept").await;
    assert_eq!(accepted.status(), StatusCode::NO_CONTENT);
}

/// A script co-browse does not outlive either side: it ends when the agent's
/// live view is gone for good (not on a reload), and when the visitor's
/// session ends, counted up to the visitor's last batch; the sweep ends one
/// whose agent's instance went away too.
async fn script_cobrowse_ends_when_a_side_leaves(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Shop").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "ada@shop.example", Role::Agent, false).await;
    let agent = session(&app, "ada@shop.example").await;
    let (id, token) = recorded_visit(&app, &key).await;
    let mut control = control_stream(&app, &key, &id, &token).await;
    let ask_and_accept = || ask_and_accept(&app, &agent, &key, &id, &token);

    // The agent reloads the live view: the co-browse goes on.
    let first = live_view(&app, &agent, &id).await;
    ask_and_accept().await;
    let mut reloaded = live_view(&app, &agent, &id).await;
    drop(first);
    let services = &app.services;
    let now = rapport_core::time::now_ms();
    assert!(!services.end_cobrowse_if_agent_gone(&tenant, &id, now).await.unwrap());
    read_until(&mut reloaded, r#""state":"active""#, WAIT).await;

    // The agent closes it for good: half a minute on, the visitor hears that
    // the agent left, and the co-browse is over.
    drop(reloaded);
    let gone = Duration::from_millis(rapport_core::cobrowsing::AGENT_GONE_MS as u64) + WAIT;
    read_until(&mut control, r#""by":"agent_left""#, gone).await;
    let late = agent_says(&app, &agent, &id, json!({"type": "pointer", "x": 1, "y": 1})).await;
    expect_problem(late, StatusCode::CONFLICT, "not_active").await;

    // An agent whose instance went away: the recurring sweep ends it.
    let mut viewer = live_view(&app, &agent, &id).await;
    ask_and_accept().await;
    let later = rapport_core::time::now_ms() + rapport_core::cobrowsing::AGENT_GONE_MS + 1_000;
    assert_eq!(services.end_abandoned_cobrowses(later).await.unwrap(), 1);
    read_until(&mut viewer, r#""state":"ended""#, WAIT).await;

    // The visitor leaves: the session's end ends the co-browse too.
    ask_and_accept().await;
    read_until(&mut viewer, r#""state":"active""#, WAIT).await;
    assert!(services
        .end_recording(&tenant, &id, rapport_core::time::now_ms())
        .await
        .unwrap());
    read_until(&mut control, r#""by":"visitor_left""#, WAIT).await;
    let over = services.script_cobrowse(&tenant, &id).await.unwrap().unwrap();
    assert_eq!(over.state, rapport_core::cobrowsing::ScriptState::Ended);

    // All three were accepted, so all three count; each end is audited.
    let counted = report(&app, &t, "/rest/v1/report/cobrowse", &["COBROWSE_SESSIONS"]).await;
    assert_eq!(sum(&counted, "COBROWSE_SESSIONS"), 3.0, "{counted}");
    let audit = audit_actions(&app, &t).await;
    assert_eq!(audit.matches("cobrowse.end").count(), 3, "{audit}");
}

/// A site on loopback, which the tests' settings let Chromium reach: `/` is red,
/// `/form` is a file input over the whole viewport, `/report.pdf` a download.
pub(crate) async fn red_site() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let read = socket.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..read]);
                let (kind, body) = if request.starts_with("GET /form ") {
                    let input = "<input type=file style='position:fixed;left:0;top:0;width:1280px;height:720px'>";
                    ("text/html", format!("<!doctype html><title>Form</title>{input}"))
                } else if request.starts_with("GET /report.pdf ") {
                    (
                        "application/pdf\r\ncontent-disposition: attachment; filename=report.pdf",
                        "%PDF-1.4".into(),
                    )
                } else {
                    (
                        "text/html",
                        "<!doctype html><title>Red</title><body style='background:#f00'>".into(),
                    )
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/")
}

pub(crate) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(crate) async fn connect(app: &TestApp, link: &str) -> Socket {
    let url = url::Url::parse(link).unwrap();
    // The link names the public URL; the socket is this instance's.
    let target = format!(
        "{}{}/ws?{}",
        app.base.replacen("http://", "ws://", 1),
        url.path(),
        url.query().unwrap()
    );
    tokio_tungstenite::connect_async(target).await.unwrap().0
}

/// The next text message whose type is `kind` (frames and others skipped).
pub(crate) async fn next_of(socket: &mut Socket, kind: &str) -> Value {
    first_of(socket, &[kind]).await
}

/// The next text message whose type is one of `kinds` (frames and others skipped).
pub(crate) async fn first_of(socket: &mut Socket, kinds: &[&str]) -> Value {
    tokio::time::timeout(WAIT, async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let value: Value = serde_json::from_str(text.as_str()).unwrap();
                    if kinds.iter().any(|kind| value["type"] == *kind) {
                        return value;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the socket ended before {kinds:?}: {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{kinds:?} within {WAIT:?}"))
}

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

pub(crate) async fn say(socket: &mut Socket, message: Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
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

backend_tests!(
    script_cobrowsing_follows_the_visitor,
    script_cobrowse_ends_when_a_side_leaves,
    universal_cobrowsing_runs_a_real_browser
);
