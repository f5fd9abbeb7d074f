//! The conference's signalling socket (`/join/{token}/ws`), on both
//! backends: who may enter (validity, password, room size), the waiting room
//! (a signed-in agent admits and declines), the roster, and the host removing
//! someone. Media itself is tested in Chromium (`end2end/tests/conference.spec.ts`).

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::{
    tungstenite::{client::IntoClientRequest, http::HeaderValue, Message},
    MaybeTlsStream, WebSocketStream,
};

use crate::{
    dashboard::session,
    utils::{ok_json, TestApp},
};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;
const WAIT: Duration = Duration::from_secs(5);

/// Creates an appointment starting now; returns its join token.
async fn appointment(app: &TestApp, token: &str, extra: Value) -> String {
    let mut body = json!({"title": "Consultation", "date": chrono::Utc::now().to_rfc3339(), "durationInMinutes": 30,
        "timezoneId": "Europe/Berlin", "validType": "HOURS", "validBefore": 1, "validAfter": 1});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    let created = ok_json(app.post("/rest/v1/appointment", token, body).await, StatusCode::CREATED).await;
    created["joinLink"]
        .as_str()
        .unwrap()
        .rsplit('/')
        .next()
        .unwrap()
        .to_string()
}

/// Opens the socket (as the dashboard's page would, with `cookie` when a user
/// is signed in) and says hello.
async fn connect(app: &TestApp, join: &str, cookie: Option<&str>, hello: Value) -> Socket {
    let url = format!("{}/join/{join}/ws", app.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().unwrap();
    if let Some(cookie) = cookie {
        request
            .headers_mut()
            .insert("cookie", HeaderValue::from_str(cookie).unwrap());
        request
            .headers_mut()
            .insert("origin", HeaderValue::from_str(&app.base).unwrap());
    }
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    socket.send(Message::text(hello.to_string())).await.unwrap();
    socket
}

/// The next message of `kind`, skipping others (roster updates come often).
async fn expect(socket: &mut Socket, kind: &str) -> Value {
    loop {
        let next = tokio::time::timeout(WAIT, socket.next())
            .await
            .unwrap_or_else(|_| panic!("a {kind} message within {WAIT:?}"))
            .unwrap_or_else(|| panic!("a {kind} message before the socket closed"))
            .unwrap();
        if let Message::Text(text) = next {
            let message: Value = serde_json::from_str(text.as_str()).unwrap();
            if message["type"] == kind {
                return message;
            }
        }
    }
}

/// Sends a message on the socket.
async fn say(socket: &mut Socket, message: Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
}

async fn who_may_enter(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Calls").await;

    let url = format!("{}/join/nope/ws", app.base.replace("http://", "ws://"));
    match tokio_tungstenite::connect_async(url).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 404),
        other => panic!("an unknown link opens no socket: {:?}", other.map(|_| ())),
    }

    // Outside the link's validity, and a disabled link.
    let later = appointment(
        &app,
        &t,
        json!({"date": (chrono::Utc::now() + chrono::Duration::days(2)).to_rfc3339()}),
    )
    .await;
    let mut early = connect(&app, &later, None, json!({"type": "hello", "name": "Eve"})).await;
    assert_eq!(expect(&mut early, "refused").await["reason"], "not_yet");
    let past = appointment(
        &app,
        &t,
        json!({"date": (chrono::Utc::now() - chrono::Duration::days(2)).to_rfc3339()}),
    )
    .await;
    let mut late = connect(&app, &past, None, json!({"type": "hello", "name": "Eve"})).await;
    assert_eq!(expect(&mut late, "refused").await["reason"], "ended");
    let off = appointment(&app, &t, json!({"valid": false})).await;
    let mut disabled = connect(&app, &off, None, json!({"type": "hello", "name": "Eve"})).await;
    assert_eq!(expect(&mut disabled, "refused").await["reason"], "disabled");

    // The password, and a name.
    let locked = appointment(&app, &t, json!({"password": "open sesame"})).await;
    let mut wrong = connect(
        &app,
        &locked,
        None,
        json!({"type": "hello", "name": "Eve", "password": "guess"}),
    )
    .await;
    assert_eq!(expect(&mut wrong, "refused").await["reason"], "password");
    let mut nameless = connect(
        &app,
        &locked,
        None,
        json!({"type": "hello", "name": "  ", "password": "open sesame"}),
    )
    .await;
    assert_eq!(expect(&mut nameless, "refused").await["reason"], "name");
    let mut right = connect(
        &app,
        &locked,
        None,
        json!({"type": "hello", "name": "Ann", "password": "open sesame"}),
    )
    .await;
    let joined = expect(&mut right, "joined").await;
    assert_eq!(joined["host"], false);
    assert_eq!(joined["participants"][0]["name"], "Ann");

    // Everyone sees the roster change.
    let mut second = connect(
        &app,
        &locked,
        None,
        json!({"type": "hello", "name": "Bob", "password": "open sesame"}),
    )
    .await;
    expect(&mut second, "joined").await;
    let names = loop {
        let roster = expect(&mut right, "participants").await;
        let names: Vec<String> = roster["participants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_string())
            .collect();
        if names.len() == 2 {
            break names;
        }
    };
    assert_eq!(names, ["Ann", "Bob"], "in the order they came");
    say(&mut second, json!({"type": "leave"})).await;
    loop {
        let roster = expect(&mut right, "participants").await;
        if roster["participants"].as_array().unwrap().len() == 1 {
            break;
        }
    }
    app.stop().await;
}

async fn the_host_admits_declines_and_removes(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Lobby").await;
    let (other_tenant, _) = app.tenant_with_key("Elsewhere").await;
    app.user(&tenant, "host@lobby.example", Role::Agent, false).await;
    app.user(&other_tenant, "agent@elsewhere.example", Role::Agent, false)
        .await;
    let host_cookie = session(&app, "host@lobby.example").await;
    let stranger_cookie = session(&app, "agent@elsewhere.example").await;
    let join = appointment(
        &app,
        &t,
        json!({"password": "letmein", "permissions": {"enableWaitingRoom": true}}),
    )
    .await;

    // A guest waits; the host needs no password and is let in at once.
    let mut guest = connect(
        &app,
        &join,
        None,
        json!({"type": "hello", "name": "Gina", "password": "letmein"}),
    )
    .await;
    expect(&mut guest, "waiting").await;
    let mut host = connect(
        &app,
        &join,
        Some(&host_cookie),
        json!({"type": "hello", "name": "Hana"}),
    )
    .await;
    assert_eq!(expect(&mut host, "joined").await["host"], true);
    let lobby = expect(&mut host, "lobby").await;
    assert_eq!(lobby["waiting"][0]["name"], "Gina");
    let gina = lobby["waiting"][0]["id"].as_str().unwrap().to_string();

    // An agent of another tenant is a guest here: it waits too, and cannot admit.
    let mut stranger = connect(
        &app,
        &join,
        Some(&stranger_cookie),
        json!({"type": "hello", "name": "Sam", "password": "letmein"}),
    )
    .await;
    expect(&mut stranger, "waiting").await;
    say(&mut stranger, json!({"type": "admit", "id": gina})).await;

    // The host admits Gina, who enters the call; Sam is declined.
    say(&mut host, json!({"type": "admit", "id": gina})).await;
    let joined = expect(&mut guest, "joined").await;
    assert_eq!(joined["you"], gina.as_str());
    let lobby = loop {
        let lobby = expect(&mut host, "lobby").await;
        if lobby["waiting"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["id"] != gina.as_str())
        {
            break lobby;
        }
    };
    let sam = lobby["waiting"][0]["id"].as_str().unwrap().to_string();
    say(&mut host, json!({"type": "decline", "id": sam})).await;
    expect(&mut stranger, "declined").await;

    // A guest cannot remove anyone; the host removes Gina.
    say(&mut guest, json!({"type": "remove", "id": "whoever"})).await;
    say(&mut host, json!({"type": "remove", "id": gina})).await;
    expect(&mut guest, "removed").await;
    loop {
        let roster = expect(&mut host, "participants").await;
        let ids: Vec<&str> = roster["participants"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap())
            .collect();
        if !ids.contains(&gina.as_str()) {
            break;
        }
    }

    // The host leaves last: the conference ended, and the report counts it
    // with the two who were let in (the declined guest is not one of them).
    say(&mut host, json!({"type": "leave"})).await;
    drop(guest);
    let body = json!({"metrics": [{"metricName": "CONFERENCES"}, {"metricName": "CONFERENCE_PARTICIPANTS"}],
        "dateFilter": {"grouping": "TODAY"}});
    let sum = |report: &Value, name: &str| -> i64 {
        report["results"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|bucket| bucket[name].as_str())
            .map(|n| n.parse::<i64>().unwrap())
            .sum()
    };
    let mut counted = Value::Null;
    for _ in 0..50 {
        counted = ok_json(
            app.post("/rest/v1/report/conference", &t, body.clone()).await,
            StatusCode::OK,
        )
        .await;
        if sum(&counted, "CONFERENCES") == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(sum(&counted, "CONFERENCES"), 1, "{counted}");
    assert_eq!(sum(&counted, "CONFERENCE_PARTICIPANTS"), 2, "{counted}");

    // Joins, admits, declines and removals are audited.
    let audit = ok_json(app.get("/rest/v1/audit?pageSize=50", &t).await, StatusCode::OK).await;
    let actions: Vec<&str> = audit["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    for action in [
        "conference.join",
        "conference.admit",
        "conference.decline",
        "conference.remove",
    ] {
        assert!(actions.contains(&action), "{action} in {actions:?}");
    }
    app.stop().await;
}

async fn chat_and_what_guests_may_do(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Rights").await;
    app.user(&tenant, "host@rights.example", Role::Agent, false).await;
    let host_cookie = session(&app, "host@rights.example").await;

    // By default guests may chat and share their screen.
    let open = appointment(&app, &t, json!({})).await;
    let mut ann = connect(&app, &open, None, json!({"type": "hello", "name": "Ann"})).await;
    let joined = expect(&mut ann, "joined").await;
    assert_eq!(joined["permissions"], json!({"screenShare": true, "chat": true}));
    let mut bob = connect(&app, &open, None, json!({"type": "hello", "name": "Bob"})).await;
    expect(&mut bob, "joined").await;
    say(&mut ann, json!({"type": "chat", "text": "  Hello, Bob  "})).await;
    for socket in [&mut ann, &mut bob] {
        let chat = expect(socket, "chat").await;
        assert_eq!(
            (chat["name"].as_str(), chat["text"].as_str()),
            (Some("Ann"), Some("Hello, Bob"))
        );
        assert!(chat["at"].as_str().is_some());
    }

    // Where the appointment says no, guests may neither; hosts still may.
    let strict = appointment(
        &app,
        &t,
        json!({"permissions": {"allowChat": false, "allowScreenShare": false}}),
    )
    .await;
    let mut guest = connect(&app, &strict, None, json!({"type": "hello", "name": "Gus"})).await;
    assert_eq!(
        expect(&mut guest, "joined").await["permissions"],
        json!({"screenShare": false, "chat": false})
    );
    let mut host = connect(
        &app,
        &strict,
        Some(&host_cookie),
        json!({"type": "hello", "name": "Hana"}),
    )
    .await;
    assert_eq!(
        expect(&mut host, "joined").await["permissions"],
        json!({"screenShare": true, "chat": true})
    );
    say(&mut guest, json!({"type": "chat", "text": "psst"})).await;
    assert_eq!(expect(&mut guest, "error").await["message"], "chat is off in this call");
    say(&mut host, json!({"type": "chat", "text": "Welcome"})).await;
    let heard = expect(&mut guest, "chat").await;
    assert_eq!(
        heard["text"], "Welcome",
        "the guest reads the host, and never heard its own refused line"
    );
    app.stop().await;
}

backend_tests!(
    who_may_enter,
    the_host_admits_declines_and_removes,
    chat_and_what_guests_may_do
);
