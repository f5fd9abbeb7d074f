//! The agents' inbox over HTTP: its live event stream, the list with waiting
//! counts, the thread with every message type, reply, assignment and status,
//! the no-JavaScript reply, and tenant isolation. (Clicking through it in
//! Chromium is in end2end/tests/inbox.spec.ts.)

use std::time::Duration;

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, session},
    utils::{ok_json, read_until, TestApp},
};

const WAIT: Duration = Duration::from_secs(20);

async fn call(app: &TestApp, name: &str, cookie: &str, form: &[(&str, &str)]) -> Value {
    let response = server_fn(app, name, cookie, form).await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{name}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

async fn inbound(app: &TestApp, key: &str, customer: &str, text: &str) {
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            key,
            json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": text}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
}

async fn agents_work_the_inbox_live(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let agent_id = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    app.user(&beta, "agent@beta.example", Role::Agent, false).await;
    let agent = session(&app, "agent@alpha.example").await;
    let stranger = session(&app, "agent@beta.example").await;

    // The stream needs a session.
    let anonymous = app.request(Method::GET, "/inbox/events").send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let mut stream = app
        .request(Method::GET, "/inbox/events")
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    assert!(stream.headers()[header::CONTENT_TYPE]
        .to_str()
        .unwrap()
        .starts_with("text/event-stream"));

    let other = ok_json(
        app.post("/rest/v1/customer", &beta_key, json!({"firstName": "Mallory"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let customer = ok_json(
        app.post(
            "/rest/v1/customer",
            &key,
            json!({"firstName": "Eve", "lastName": "Doe", "email": "eve@example.com"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let id = customer["id"].as_str().unwrap().to_string();
    let other_id = other["id"].as_str().unwrap().to_string();
    // Another tenant's message first: the agent's stream must skip it.
    inbound(&app, &beta_key, &other_id, "Not yours").await;
    inbound(&app, &key, &id, "Where is my order?").await;
    let seen = read_until(&mut stream, "event: message", WAIT).await;
    assert!(seen.contains(&id), "{seen}");
    assert!(!seen.contains(&other_id), "another tenant's event leaked: {seen}");
    inbound(&app, &key, &id, "Order 1042").await;

    // The list: counts per status, and two customer messages waiting.
    let list = call(&app, "inbox_list", &agent, &[("status", "UNREAD"), ("mine", "false")]).await;
    assert_eq!(list["counts"], json!([1, 0, 0]), "{list}");
    let row = &list["rows"][0];
    assert_eq!(row["customer_id"], id.as_str());
    assert_eq!(row["name"], "Eve Doe");
    assert_eq!(row["waiting"], 2);
    assert_eq!(row["last_text"], "Order 1042");

    // Every message type reaches the thread with what it needs to render.
    for body in [
        json!({"type": "AUDIO", "url": "https://cdn.example.com/voice.mp3"}),
        json!({"type": "VIDEO", "url": "https://cdn.example.com/demo.mp4", "message": "How to"}),
        json!({"type": "FILE", "url": "https://cdn.example.com/invoice.pdf"}),
        json!({"type": "CARD", "buttonText": "Track", "buttonLink": "https://shop.example.com/track"}),
    ] {
        let mut body = body;
        body["customerId"] = json!(id);
        body["isExternalId"] = json!(false);
        ok_json(app.post("/rest/v1/message", &key, body).await, StatusCode::CREATED).await;
    }
    let thread = call(&app, "inbox_thread", &agent, &[("customer_id", id.as_str())]).await;
    assert_eq!(thread["status"], "UNRESOLVED", "a reply answered it: {thread}");
    let kinds: Vec<&str> = thread["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["MESSAGE", "MESSAGE", "AUDIO", "VIDEO", "FILE", "CARD"],
        "oldest first"
    );
    assert_eq!(thread["messages"][0]["inbound"], true);
    assert_eq!(thread["messages"][0]["sender"], "Eve Doe");
    assert_eq!(thread["messages"][3]["text"], "How to");
    assert_eq!(
        thread["messages"][5]["button"],
        json!(["Track", "https://shop.example.com/track"])
    );

    // Reply, assign to me, and the list follows.
    inbound(&app, &key, &id, "Thanks, and the invoice?").await;
    let empty = server_fn(
        &app,
        "inbox_reply",
        &agent,
        &[("customer_id", id.as_str()), ("message", " ")],
    )
    .await;
    assert_eq!(empty.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = empty.text().await.unwrap();
    assert!(
        text.contains(r#"\"field\":\"message\""#) || text.contains(r#""field":"message""#),
        "{text}"
    );
    call(
        &app,
        "inbox_reply",
        &agent,
        &[("customer_id", id.as_str()), ("message", "Attached above.")],
    )
    .await;
    read_until(&mut stream, "event: message", WAIT).await;
    let me = format!("user:{agent_id}");
    call(
        &app,
        "inbox_assign",
        &agent,
        &[("customer_id", id.as_str()), ("to", me.as_str())],
    )
    .await;
    read_until(&mut stream, "event: assigned", WAIT).await;
    let mine = call(
        &app,
        "inbox_list",
        &agent,
        &[("status", "UNRESOLVED"), ("mine", "true")],
    )
    .await;
    assert_eq!(mine["rows"][0]["waiting"], 0, "answered: {mine}");
    assert_eq!(mine["rows"][0]["assignee"], "agent@alpha.example");
    let thread = call(&app, "inbox_thread", &agent, &[("customer_id", id.as_str())]).await;
    assert_eq!(thread["assigned"], me.as_str());
    let last = thread["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["inbound"], false);
    assert_eq!(last["sender"], "agent@alpha.example");
    // The reply went out as a real message.
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{id}/message"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(history["results"][0]["message"], "Attached above.", "{history}");
    assert_eq!(history["results"][0]["channel"], "DASHBOARD");

    // Status, by a plain form post without JavaScript: back to the page.
    let done = app
        .request(Method::POST, "/api/inbox_status")
        .header(header::COOKIE, &agent)
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}/inbox?c={id}", app.base))
        .form(&[("customer_id", id.as_str()), ("status", "DONE")])
        .send()
        .await
        .unwrap();
    assert!(done.status().is_redirection(), "{}", done.status());
    read_until(&mut stream, "event: conversation", WAIT).await;
    let list = call(&app, "inbox_list", &agent, &[("status", "DONE"), ("mine", "false")]).await;
    assert_eq!(list["counts"], json!([0, 0, 1]));
    let bad = server_fn(
        &app,
        "inbox_status",
        &agent,
        &[("customer_id", id.as_str()), ("status", "LATER")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // Another tenant's agent sees nothing of it.
    for (name, form) in [
        ("inbox_thread", vec![("customer_id", id.as_str())]),
        ("inbox_reply", vec![("customer_id", id.as_str()), ("message", "hi")]),
        ("inbox_status", vec![("customer_id", id.as_str()), ("status", "UNREAD")]),
        ("inbox_assign", vec![("customer_id", id.as_str()), ("to", "")]),
    ] {
        let refused = server_fn(&app, name, &stranger, &form).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{name}");
    }
    let theirs = call(
        &app,
        "inbox_list",
        &stranger,
        &[("status", "UNREAD"), ("mine", "false")],
    )
    .await;
    assert_eq!(theirs["rows"].as_array().unwrap().len(), 1);
    assert_eq!(theirs["rows"][0]["customer_id"], other_id.as_str());

    // A long tab shows the newest conversations and says older ones exist.
    for name in ["Finn", "Gus"] {
        let c = ok_json(
            app.post("/rest/v1/customer", &key, json!({"firstName": name})).await,
            StatusCode::CREATED,
        )
        .await;
        inbound(&app, &key, c["id"].as_str().unwrap(), "Hello").await;
    }
    let short = call(
        &app,
        "inbox_list",
        &agent,
        &[("status", "UNREAD"), ("mine", "false"), ("shown", "1")],
    )
    .await;
    assert_eq!(short["rows"].as_array().unwrap().len(), 1);
    assert_eq!(short["rows"][0]["name"], "Gus", "newest first: {short}");
    assert_eq!(short["more"], true);
    let whole = call(&app, "inbox_list", &agent, &[("status", "UNREAD"), ("mine", "false")]).await;
    assert_eq!(whole["rows"].as_array().unwrap().len(), 2);
    assert_eq!(whole["more"], false);
    drop(stream);
}

backend_tests!(agents_work_the_inbox_live);

/// Reads the event stream for up to `wait`; what it read.
async fn read_for(stream: &mut reqwest::Response, wait: Duration) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + wait;
    while let Ok(Ok(Some(chunk))) = tokio::time::timeout_at(deadline, stream.chunk()).await {
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    seen
}

/// Two instances on one PostgreSQL database: what changes through one reaches
/// the live screens of the other (the inbox, and the visitor's widget with the
/// message itself), and so do typing signals, which nothing stores. SQLite runs one instance per file, so this is PostgreSQL's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_reach_live_screens_on_another_instance() {
    let Some(db) = TestDb::postgres().await.expect("postgres test database") else {
        eprintln!("skipped: {} is not set", rapport_core::testing::POSTGRES_URL_VAR);
        return;
    };
    let a = TestApp::start(db).await;
    let b = a.another_instance().await;
    let (tenant, key) = a.tenant_with_key("Alpha").await;
    a.user(&tenant, "agent@alpha.example", Role::Agent, false).await;
    let agent = session(&a, "agent@alpha.example").await;
    let mut inbox = a
        .request(Method::GET, "/inbox/events")
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(inbox.status(), StatusCode::OK);

    // The visitor's widget streams from instance A.
    let widget_key = ok_json(b.get("/rest/v1/widget/key", &key).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let visitor = ok_json(
        b.request(Method::POST, "/rest/v1/widget/visitor")
            .header("rapport-widget-key", &widget_key)
            .json(&json!({"firstName": "Vera"}))
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    let customer = visitor["customerId"].as_str().unwrap().to_string();
    let mut widget = a
        .request(Method::GET, "/rest/v1/widget/stream")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(visitor["visitorToken"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(widget.status(), StatusCode::OK);

    // A starts listening as it starts serving; until it does, what B announces
    // is not heard. Write through B until A's inbox hears it.
    let mut heard = String::new();
    for attempt in 0..40 {
        inbound(&b, &key, &customer, &format!("hello {attempt}")).await;
        heard = read_for(&mut inbox, Duration::from_millis(500)).await;
        if heard.contains("event: message") {
            break;
        }
    }
    assert!(heard.contains(&format!("\"customerId\":\"{customer}\"")), "{heard}");

    // From now on each change through B reaches A's screens.
    let path = format!("/rest/v1/conversation/{customer}/status");
    let done = b
        .request(Method::PUT, &path)
        .bearer_auth(&key)
        .json(&json!({"status": "DONE"}))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), StatusCode::OK);
    read_until(&mut inbox, "event: conversation", WAIT).await;
    ok_json(
        b.post(&format!("/rest/v1/customer/{customer}/assign"), &key, json!({}))
            .await,
        StatusCode::OK,
    )
    .await;
    read_until(&mut inbox, "event: assigned", WAIT).await;
    let reply = ok_json(
        b.post(
            "/rest/v1/message",
            &key,
            json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": "Yes, ships today."}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let seen = read_until(&mut widget, "Yes, ships today.", WAIT).await;
    assert!(seen.contains("event: message"), "{seen}");
    assert!(
        seen.contains("\"direction\":\"OUTBOUND\""),
        "the whole message, read back: {seen}"
    );
    // The agents' inbox shows replies too.
    read_until(&mut inbox, "event: message", WAIT).await;
    // An instance does not hear itself twice: A's own change arrives once.
    inbound(&a, &key, &customer, "only once").await;
    let own = read_for(&mut inbox, Duration::from_secs(2)).await;
    assert_eq!(own.matches("event: message").count(), 1, "{own}");
    // Typing, which is never stored, crosses too; and so does a read mark.
    let typed = b
        .request(Method::POST, "/rest/v1/widget/typing")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(visitor["visitorToken"].as_str().unwrap())
        .json(&json!({"typing": true, "draft": "Across instances"}))
        .send()
        .await
        .unwrap();
    assert_eq!(typed.status(), StatusCode::NO_CONTENT);
    let heard = read_until(&mut inbox, "Across instances", WAIT).await;
    assert!(heard.contains("event: typing"), "{heard}");
    let read = b
        .post(
            &format!("/rest/v1/conversation/{customer}/read"),
            &key,
            json!({"messageId": reply["id"]}),
        )
        .await;
    assert_eq!(read.status(), StatusCode::OK);
    read_until(&mut widget, "event: read", WAIT).await;
    drop((inbox, widget));
    b.stop().await;
}
