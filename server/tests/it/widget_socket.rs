//! The visitor's WebSocket (`/widget/socket`), on both backends: the hello
//! names the visitor, its messages arrive as frames and count as delivered,
//! nothing of another visitor or tenant arrives, a refused hello says why and
//! closes with 4000 + the status, and sockets spend the same `openStreams`
//! allowance as event streams.

use futures_util::{SinkExt, StreamExt};
use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

use crate::{
    cobrowsing::Socket,
    utils::{expect_problem, ok_json, send, TestApp},
};

const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

async fn connect(app: &TestApp) -> Socket {
    let url = format!("{}/rest/v1/widget/socket", app.base.replacen("http://", "ws://", 1));
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// The next JSON frame the server sends, skipping pings.
pub(crate) async fn frame(socket: &mut Socket) -> Value {
    loop {
        match tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("a frame within 10 s")
        {
            Some(Ok(Message::Text(text))) => return serde_json::from_str(text.as_str()).unwrap(),
            Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            other => panic!("expected a text frame, got {other:?}"),
        }
    }
}

/// The close code the server ends with.
async fn close_code(socket: &mut Socket) -> u16 {
    loop {
        match tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("a close within 10 s")
        {
            Some(Ok(Message::Close(Some(close)))) => return close.code.into(),
            Some(Ok(_)) => continue,
            other => panic!("expected a close frame, got {other:?}"),
        }
    }
}

/// Opens a socket and says hello; the first frame the server answers with.
pub(crate) async fn hello(app: &TestApp, key: &str, token: &str) -> (Socket, Value) {
    let mut socket = connect(app).await;
    let hello = json!({"widgetKey": key, "visitorToken": token}).to_string();
    socket.send(Message::text(hello)).await.unwrap();
    let first = frame(&mut socket).await;
    (socket, first)
}

/// The agent's message reaches the visitor's socket, and only this visitor's:
/// another visitor of the workspace and another workspace hear nothing of it.
async fn a_visitors_socket_carries_its_conversation(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Shop").await;
    let (_, other) = app.tenant_with_key("Other shop").await;
    let key = app.widget_key(&t).await;
    let other_key = app.widget_key(&other).await;
    let (customer, token) = app.widget_visitor(&key, "Vera").await;
    let (_, bystander_token) = app.widget_visitor(&key, "Bob").await;
    let (_, stranger_token) = app.widget_visitor(&other_key, "Sam").await;

    let (mut socket, ready) = hello(&app, &key, &token).await;
    assert_eq!(ready, json!({"event": "ready"}));
    let (mut bystander, _) = hello(&app, &key, &bystander_token).await;
    let (mut stranger, _) = hello(&app, &other_key, &stranger_token).await;

    ok_json(
        app.post(
            "/rest/v1/message",
            &t,
            json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": "Yes, ships today."}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let message = frame(&mut socket).await;
    assert_eq!(message["event"], "message", "{message}");
    assert_eq!(message["data"]["message"], "Yes, ships today.");
    assert_eq!(message["data"]["direction"], "OUTBOUND");

    // The visitor's own message, written on another device, comes too.
    let written = app
        .request(Method::POST, "/rest/v1/widget/message")
        .header("rapport-widget-key", &key)
        .bearer_auth(&token)
        .json(&json!({"message": "Great, thanks"}))
        .send()
        .await
        .unwrap();
    ok_json(written, StatusCode::CREATED).await;
    let echoed = frame(&mut socket).await;
    assert_eq!(
        (&echoed["data"]["message"], &echoed["data"]["direction"]),
        (&json!("Great, thanks"), &json!("INBOUND"))
    );

    // Carried means delivered.
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{customer}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    let outbound = history["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["direction"] == "OUTBOUND")
        .unwrap()
        .clone();
    assert!(outbound["deliveredAt"].is_string(), "{outbound}");

    // Nothing reached the others: a ping round trip proves their sockets are
    // live and that no frame waits before the pong.
    for other in [&mut bystander, &mut stranger] {
        other.send(Message::Ping(b"still there".to_vec().into())).await.unwrap();
        match tokio::time::timeout(WAIT, other.next()).await.unwrap() {
            Some(Ok(Message::Pong(payload))) => assert_eq!(&payload[..], b"still there"),
            got => panic!("another visitor heard something: {got:?}"),
        }
    }
    app.stop().await;
}

/// Every way a socket can be refused says why, with the REST API's problem and
/// a close code of 4000 + its status; a request that is no WebSocket gets 426.
async fn a_refused_socket_says_why(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Shop").await;
    let (_, other) = app.tenant_with_key("Other shop").await;
    let key = app.widget_key(&t).await;
    let other_key = app.widget_key(&other).await;
    let (_, token) = app.widget_visitor(&key, "Vera").await;

    let plain = app.request(Method::GET, "/rest/v1/widget/socket").send().await.unwrap();
    expect_problem(plain, StatusCode::UPGRADE_REQUIRED, "websocket_required").await;

    // Not a hello.
    let mut socket = connect(&app).await;
    socket.send(Message::text("hello?")).await.unwrap();
    let refused = frame(&mut socket).await;
    assert_eq!(
        (
            &refused["event"],
            &refused["problem"]["code"],
            &refused["problem"]["status"]
        ),
        (&json!("error"), &json!("invalid_hello"), &json!(400)),
        "{refused}"
    );
    assert_eq!(close_code(&mut socket).await, 4400);

    // Another workspace's key does not open this visitor.
    let (mut socket, refused) = hello(&app, &other_key, &token).await;
    assert_eq!(refused["problem"]["code"], "invalid_visitor", "{refused}");
    assert_eq!(close_code(&mut socket).await, 4401);
    let (mut socket, refused) = hello(&app, &key, "vt_forged").await;
    assert_eq!(refused["problem"]["code"], "invalid_visitor", "{refused}");
    assert_eq!(close_code(&mut socket).await, 4401);
    app.stop().await;
}

/// Sockets and event streams share the workspace's `openStreams`: at the bound a
/// socket is refused with 4429 and the wait, and a place frees when a page goes.
async fn sockets_spend_the_open_streams_allowance(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Busy shop").await;
    let platform = app.platform_key().await;
    let limits = format!("/rest/v1/tenant/{tenant}/limits");
    let set = send(&app, Method::PUT, &limits, &platform, Some(json!({"openStreams": 2}))).await;
    ok_json(set, StatusCode::OK).await;
    let key = app.widget_key(&t).await;
    let (_, ann) = app.widget_visitor(&key, "Ann").await;
    let (_, bea) = app.widget_visitor(&key, "Bea").await;
    let (_, carl) = app.widget_visitor(&key, "Carl").await;

    let (ann_socket, ready) = hello(&app, &key, &ann).await;
    assert_eq!(ready["event"], "ready");
    let stream = app
        .request(Method::GET, "/rest/v1/widget/stream")
        .header("rapport-widget-key", &key)
        .bearer_auth(&bea)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(app.services.open_streams().open(&tenant), 2);

    let (mut refused, answer) = hello(&app, &key, &carl).await;
    assert_eq!(
        (&answer["problem"]["code"], &answer["retryAfter"]),
        (&json!("stream_allowance_spent"), &json!(30)),
        "{answer}"
    );
    assert_eq!(close_code(&mut refused).await, 4429);

    // Ann's page goes: her place frees once the server notices.
    drop(ann_socket);
    let mut opened = None;
    for _ in 0..100 {
        let (socket, answer) = hello(&app, &key, &carl).await;
        if answer["event"] == "ready" {
            opened = Some(socket);
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(opened.is_some(), "a place frees when a page leaves");
    // An open event stream would hold the graceful shutdown.
    drop((stream, opened));
    app.stop().await;
}

backend_tests!(
    a_visitors_socket_carries_its_conversation,
    a_refused_socket_says_why,
    sockets_spend_the_open_streams_allowance
);
