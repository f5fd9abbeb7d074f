//! Each tenant's bounds on what its callers make the server keep or do (issue
//! 33), on both backends: visitors started per minute, bytes of chat files
//! kept, and mails per day. Only a platform key sets them; going over one is a
//! 413 or 429 problem with a stable code, for that tenant only, and nothing
//! already stored is lost. (Recordings' bounds are in `recordings/bounds.rs`.)

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

async fn file(app: &TestApp, key: &str, token: &str, bytes: usize) -> reqwest::Response {
    app.request(Method::POST, "/rest/v1/widget/file")
        .query(&[("name", "notes.txt")])
        .header("rapport-widget-key", key)
        .header(header::CONTENT_TYPE, "text/plain")
        .bearer_auth(token)
        .body(vec![b'x'; bytes])
        .send()
        .await
        .unwrap()
}

fn appointment(attendees: &[&str]) -> Value {
    json!({"title": "Review", "date": "2030-03-04T09:30:00Z", "durationInMinutes": 30,
        "timezoneId": "Europe/Berlin", "attendees": attendees, "sendInviteEmail": true})
}

async fn start_visitor(app: &TestApp, key: &str) -> reqwest::Response {
    app.request(Method::POST, "/rest/v1/widget/visitor")
        .header("rapport-widget-key", key)
        .json(&json!({"firstName": "Vera"}))
        .send()
        .await
        .unwrap()
}

async fn each_tenant_keeps_within_its_bounds(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Shop").await;
    let (_, neighbour) = app.tenant_with_key("Neighbour").await;
    let platform = app.platform_key().await;
    let key = app.widget_key(&t).await;
    let neighbour_key = app.widget_key(&neighbour).await;
    let limits = format!("/rest/v1/tenant/{tenant}/limits");
    let set = send(
        &app,
        Method::PUT,
        &limits,
        &platform,
        Some(json!({"fileBytes": 100, "mailsPerDay": 3})),
    )
    .await;
    let set = ok_json(set, StatusCode::OK).await;
    assert_eq!(
        (set["fileBytes"].as_i64(), set["mailsPerDay"].as_i64()),
        (Some(100), Some(3))
    );
    let unknown = send(
        &app,
        Method::PUT,
        "/rest/v1/tenant/nope/limits",
        &platform,
        Some(json!({})),
    )
    .await;
    expect_problem(unknown, StatusCode::NOT_FOUND, "not_found").await;

    // Files: the workspace keeps 100 bytes of them, whoever sends them.
    let (_, visitor) = app.widget_visitor(&key, "Fay").await;
    ok_json(file(&app, &key, &visitor, 60).await, StatusCode::CREATED).await;
    let full = file(&app, &key, &visitor, 60).await;
    expect_problem(full, StatusCode::PAYLOAD_TOO_LARGE, "file_storage_full").await;
    let (_, theirs) = app.widget_visitor(&neighbour_key, "Nia").await;
    ok_json(file(&app, &neighbour_key, &theirs, 60).await, StatusCode::CREATED).await;
    ok_json(file(&app, &neighbour_key, &theirs, 60).await, StatusCode::CREATED).await;

    // Mails: three a day. An appointment whose invitations would pass that is
    // refused whole: nothing is created, nothing written to the outbox.
    ok_json(
        app.post(
            "/rest/v1/appointment",
            &t,
            appointment(&["a@example.com", "b@example.com"]),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let spent = app
        .post(
            "/rest/v1/appointment",
            &t,
            appointment(&["c@example.com", "d@example.com"]),
        )
        .await;
    assert!(spent.headers().contains_key(header::RETRY_AFTER));
    expect_problem(spent, StatusCode::TOO_MANY_REQUESTS, "mail_allowance_spent").await;
    let listed = ok_json(app.get("/rest/v1/appointment", &t).await, StatusCode::OK).await;
    assert_eq!(listed["page"]["totalElements"], 1, "{listed}");
    ok_json(
        app.post("/rest/v1/appointment", &t, appointment(&["c@example.com"]))
            .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(
            "/rest/v1/appointment",
            &neighbour,
            appointment(&["e@example.com", "f@example.com"]),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;

    // Visitors: two a minute. Within a few starts one is refused (a minute may
    // turn between two of them), with the wait until the next minute.
    let set = send(
        &app,
        Method::PUT,
        &limits,
        &platform,
        Some(json!({"visitorsPerMinute": 2})),
    )
    .await;
    ok_json(set, StatusCode::OK).await;
    let mut refused = None;
    for _ in 0..5 {
        let started = start_visitor(&app, &key).await;
        if started.status() == StatusCode::TOO_MANY_REQUESTS {
            refused = Some(started);
            break;
        }
        assert_eq!(started.status(), StatusCode::CREATED);
    }
    let refused = refused.expect("the third visitor of a minute is refused");
    let wait: u64 = refused.headers()[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    expect_problem(refused, StatusCode::TOO_MANY_REQUESTS, "visitor_allowance_spent").await;
    for _ in 0..3 {
        assert_eq!(
            start_visitor(&app, &neighbour_key).await.status(),
            StatusCode::CREATED,
            "the neighbour is not held up"
        );
    }
    app.stop().await;
}

async fn widget_stream(app: &TestApp, key: &str, token: &str) -> reqwest::Response {
    app.request(Method::GET, "/rest/v1/widget/stream")
        .header("rapport-widget-key", key)
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
}

/// A workspace's pages hold at most `openStreams` event streams open on an
/// instance; past it a page is told to wait (429) and reads its messages
/// meanwhile, a neighbour is never held up, and a place frees when a page goes.
async fn open_streams_are_bounded_per_tenant(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Busy shop").await;
    let (_, neighbour) = app.tenant_with_key("Neighbour").await;
    let platform = app.platform_key().await;
    let limits = format!("/rest/v1/tenant/{tenant}/limits");
    let zero = send(&app, Method::PUT, &limits, &platform, Some(json!({"openStreams": 0}))).await;
    let problem = expect_problem(zero, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["openStreams"], "{problem}");
    let set = send(&app, Method::PUT, &limits, &platform, Some(json!({"openStreams": 2}))).await;
    assert_eq!(ok_json(set, StatusCode::OK).await["openStreams"], 2);
    let defaults = ok_json(
        app.get(
            &format!("/rest/v1/tenant/{}/limits", app.tenant_with_key("Third").await.0),
            &platform,
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        (
            &defaults["openStreams"],
            &defaults["cobrowseSessions"],
            &defaults["cobrowseParticipants"]
        ),
        (&json!(2000), &json!(2), &json!(8))
    );

    let key = app.widget_key(&t).await;
    let mut open = Vec::new();
    for name in ["Ann", "Bea"] {
        let (_, token) = app.widget_visitor(&key, name).await;
        let stream = widget_stream(&app, &key, &token).await;
        assert_eq!(stream.status(), StatusCode::OK);
        open.push(stream);
    }
    let (carl, carl_token) = app.widget_visitor(&key, "Carl").await;
    let refused = widget_stream(&app, &key, &carl_token).await;
    assert_eq!(refused.headers()["retry-after"], "30");
    expect_problem(refused, StatusCode::TOO_MANY_REQUESTS, "stream_allowance_spent").await;
    // Carl still gets his messages, by reading them.
    ok_json(
        app.post(
            "/rest/v1/message",
            &t,
            json!({"customerId": carl, "isExternalId": false, "type": "MESSAGE", "message": "Hello Carl"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let read = app
        .request(Method::GET, "/rest/v1/widget/message")
        .header("rapport-widget-key", &key)
        .bearer_auth(&carl_token)
        .send()
        .await
        .unwrap();
    let read = ok_json(read, StatusCode::OK).await;
    assert!(
        read["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["message"] == "Hello Carl"),
        "{read}"
    );
    // The neighbour's pages are not held up.
    let their_key = app.widget_key(&neighbour).await;
    let (_, theirs) = app.widget_visitor(&their_key, "Nia").await;
    assert_eq!(widget_stream(&app, &their_key, &theirs).await.status(), StatusCode::OK);
    assert_eq!(app.services.open_streams().open(&tenant), 2);
    // An agent's own live view is not a public page's stream: it opens at the
    // limit and takes no place.
    app.user(&tenant, "agent@busy.example", Role::Agent, false).await;
    let agent = crate::dashboard::session(&app, "agent@busy.example").await;
    let started = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", &key)
        .json(&json!({"visitorId": "v-live", "url": "https://shop.example/"}))
        .send()
        .await
        .unwrap();
    let recording = ok_json(started, StatusCode::CREATED).await["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let watching = app
        .request(Method::GET, &format!("/sessions/{recording}/live"))
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(watching.status(), StatusCode::OK);
    assert_eq!(app.services.open_streams().open(&tenant), 2);
    drop(watching);

    // Ann leaves: her place frees once the server notices, and Carl's page
    // gets its stream.
    drop(open.remove(0));
    let mut carl_stream = None;
    for _ in 0..300 {
        let stream = widget_stream(&app, &key, &carl_token).await;
        if stream.status() == StatusCode::OK {
            carl_stream = Some(stream);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(carl_stream.is_some(), "a place frees when a page leaves");
}

/// A workspace's public requests run in its share of the instance: while its
/// share is taken (here by the test, as by a flood of its pages), its next
/// request waits its turn, body and all, and a neighbour's runs at once; the
/// waiting one runs when a turn frees, and nothing is lost.
async fn public_requests_wait_for_their_workspaces_turn(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.public_concurrency = Some(1)).await;
    let (tenant, t) = app.tenant_with_key("Flooded").await;
    let (_, n) = app.tenant_with_key("Neighbour").await;
    let (key, their_key) = (app.widget_key(&t).await, app.widget_key(&n).await);
    let turn = app.shares.enter(&key, 0).await.unwrap();
    let waiting = tokio::spawn({
        let request = app
            .request(Method::POST, "/rest/v1/widget/visitor")
            .header("rapport-widget-key", &key)
            .json(&json!({"firstName": "Wanda"}));
        async move { request.send().await.unwrap() }
    });
    let neighbours = tokio::time::timeout(std::time::Duration::from_secs(5), start_visitor(&app, &their_key))
        .await
        .expect("the neighbour's request is not held up");
    ok_json(neighbours, StatusCode::CREATED).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "the flooded workspace's request waits its turn");
    drop(turn);
    let created = ok_json(waiting.await.unwrap(), StatusCode::CREATED).await;
    let customer = created["customerId"].as_str().unwrap();
    let kept = app.services.get_customer(&tenant, &customer.into()).await.unwrap();
    assert_eq!(kept.first_name.as_deref(), Some("Wanda"), "the body waited with it");
    // Requests without a widget key (agents, integrations) take no share.
    let (_, api) = app.tenant_with_key("Integrations").await;
    let _held = app.shares.enter(&key, 0).await.unwrap();
    ok_json(app.get("/rest/v1/customer", &api).await, StatusCode::OK).await;
}

backend_tests!(
    each_tenant_keeps_within_its_bounds,
    open_streams_are_bounded_per_tenant,
    public_requests_wait_for_their_workspaces_turn
);
