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
pub(crate) async fn appointment(app: &TestApp, token: &str, extra: Value) -> String {
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
            .insert("origin", HeaderValue::from_str(&app.origin).unwrap());
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

/// The appointment's id behind a join token.
pub(crate) async fn appointment_id(app: &TestApp, join: &str) -> String {
    app.services
        .appointment_by_join_token(join)
        .await
        .unwrap()
        .1
        .id
        .into_string()
}

async fn the_recording_switch_reaches_the_call(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Switch").await;
    let join = appointment(&app, &t, json!({})).await;
    let id = appointment_id(&app, &join).await;
    let mut ann = connect(&app, &join, None, json!({"type": "hello", "name": "Ann"})).await;
    assert_eq!(expect(&mut ann, "joined").await["recording"], false);

    // Switched on over REST during the call: everyone in it hears it, and
    // whoever joins next is told at once.
    let patched = app
        .request(reqwest::Method::PATCH, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&t)
        .json(&json!({"record": true}))
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(patched, StatusCode::OK).await["record"], true);
    assert_eq!(expect(&mut ann, "recording").await["recording"], true);
    let mut bob = connect(&app, &join, None, json!({"type": "hello", "name": "Bob"})).await;
    assert_eq!(expect(&mut bob, "joined").await["recording"], true);

    // A whole update that turns it off does too.
    let mut body = ok_json(app.get(&format!("/rest/v1/appointment/{id}"), &t).await, StatusCode::OK).await;
    body["record"] = json!(false);
    let put = app
        .request(reqwest::Method::PUT, &format!("/rest/v1/appointment/{id}"))
        .bearer_auth(&t)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(put.status(), StatusCode::OK);
    for socket in [&mut ann, &mut bob] {
        assert_eq!(expect(socket, "recording").await["recording"], false);
    }

    // An appointment recorded from the start says so to its first participant.
    let recorded = appointment(&app, &t, json!({"record": true})).await;
    let mut cara = connect(&app, &recorded, None, json!({"type": "hello", "name": "Cara"})).await;
    assert_eq!(expect(&mut cara, "joined").await["recording"], true);
    app.stop().await;
}

/// Opens the socket as a guest at `address` (behind the test's trusted proxy)
/// and says hello.
async fn connect_from(app: &TestApp, join: &str, address: &str, hello: Value) -> Socket {
    let url = format!("{}/join/{join}/ws", app.base.replace("http://", "ws://"));
    let mut request = url.into_client_request().unwrap();
    request
        .headers_mut()
        .insert("x-forwarded-for", HeaderValue::from_str(address).unwrap());
    let (mut socket, _) = tokio_tungstenite::connect_async(request).await.unwrap();
    socket.send(Message::text(hello.to_string())).await.unwrap();
    socket
}

async fn guesses_are_limited_and_waiting_guests_never_take_the_hosts_place(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.trusted_proxies = "127.0.0.1".parse().unwrap()).await;
    let (tenant, t) = app.tenant_with_key("Calls").await;
    app.user(&tenant, "host@calls.example", Role::Agent, false).await;
    let host_cookie = session(&app, "host@calls.example").await;
    let locked = appointment(&app, &t, json!({"password": "open sesame"})).await;
    let hello = |password: &str| json!({"type": "hello", "name": "Eve", "password": password});

    // One address guesses: ten wrong passwords, then it must wait, even with
    // the right one. Another address is not held up.
    for _ in 0..11 {
        let mut guess = connect_from(&app, &locked, "203.0.113.9", hello("guess")).await;
        assert_eq!(expect(&mut guess, "refused").await["reason"], "password");
    }
    let mut slowed = connect_from(&app, &locked, "203.0.113.9", hello("open sesame")).await;
    let refused = expect(&mut slowed, "refused").await;
    assert_eq!(refused["reason"], "rate_limited");
    assert!(
        refused["retryAfter"].as_u64().is_some_and(|s| (1..=60).contains(&s)),
        "{refused}"
    );
    let mut ann = connect_from(&app, &locked, "198.51.100.1", hello("open sesame")).await;
    expect(&mut ann, "joined").await;
    // Many addresses guessing one link: the link is slowed too.
    let mut link_slowed = false;
    for n in 0..30 {
        let mut guess = connect_from(&app, &locked, &format!("192.0.2.{n}"), hello("guess")).await;
        if expect(&mut guess, "refused").await["reason"] == "rate_limited" {
            link_slowed = true;
            break;
        }
    }
    assert!(link_slowed, "a link takes at most 30 wrong passwords in a burst");

    // The waiting room has places of its own: twelve guests wait, the next
    // is refused, and the host still gets in and may admit them.
    let lobby = appointment(&app, &t, json!({"permissions": {"enableWaitingRoom": true}})).await;
    let mut waiting = Vec::new();
    for n in 0..12 {
        let mut guest = connect_from(&app, &lobby, &format!("198.51.100.{}", 10 + n), hello("")).await;
        expect(&mut guest, "waiting").await;
        waiting.push(guest);
    }
    let mut one_more = connect_from(&app, &lobby, "198.51.100.99", hello("")).await;
    assert_eq!(expect(&mut one_more, "refused").await["reason"], "full");
    let mut host = connect(
        &app,
        &lobby,
        Some(&host_cookie),
        json!({"type": "hello", "name": "Hana"}),
    )
    .await;
    assert_eq!(expect(&mut host, "joined").await["host"], true);
    let queue = expect(&mut host, "lobby").await;
    assert_eq!(queue["waiting"].as_array().unwrap().len(), 12);
    let first = queue["waiting"][0]["id"].as_str().unwrap().to_string();
    say(&mut host, json!({"type": "admit", "id": first})).await;
    expect(&mut waiting[0], "joined").await;
    app.stop().await;
}

backend_tests!(
    guesses_are_limited_and_waiting_guests_never_take_the_hosts_place,
    who_may_enter,
    the_host_admits_declines_and_removes,
    chat_and_what_guests_may_do,
    the_recording_switch_reaches_the_call,
);
