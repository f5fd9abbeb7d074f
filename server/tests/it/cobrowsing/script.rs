//! Script co-browsing: an agent asks through the live view, the visitor script
//! hears it on its control stream and accepts, grants and ends; it ends when
//! either side leaves.

use std::time::Duration;

use rapport_core::{backend_tests, db::Backend, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use super::{audit_actions, report, sum, WAIT};
use crate::{
    dashboard::session,
    utils::{expect_problem, ok_json, read_until, TestApp},
};

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

backend_tests!(
    script_cobrowsing_follows_the_visitor,
    script_cobrowse_ends_when_a_side_leaves
);
