//! Typing indicators and read marks, on both backends: the visitor's typing
//! reaches the agents' inbox stream (with the draft only while the workspace
//! shows drafts) and never the visitor's own socket; an agent's typing, from
//! the dashboard or an integration, reaches the visitor's socket by name; read
//! marks move only forward, show on the Conversation object and reach the
//! other side live; and bad input and other tenants' conversations are refused.

use std::time::Duration;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, Response, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn_ok, session},
    utils::{expect_problem, fields, ok_json, send, TestApp},
    widget_socket::{frame, hello},
};

const WAIT: Duration = Duration::from_secs(10);

/// A tenant with an API key, its agent Ada (signed in), and a visitor who
/// wrote once: `(key, cookie, widget key, customer, visitor token)`.
struct Chat {
    key: String,
    cookie: String,
    widget_key: String,
    customer: String,
    token: String,
}

async fn chat(app: &TestApp, name: &str, agent: &str) -> Chat {
    let (tenant, key) = app.tenant_with_key(name).await;
    app.named_agent(&tenant, agent, "Ada").await;
    let cookie = session(app, agent).await;
    let widget_key = app.widget_key(&key).await;
    let (customer, token) = app.widget_visitor(&widget_key, "Vera").await;
    let chat = Chat {
        key,
        cookie,
        widget_key,
        customer,
        token,
    };
    ok_json(
        visitor(
            app,
            &chat,
            Method::POST,
            "/rest/v1/widget/message",
            Some(json!({"message": "Hello?"})),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    chat
}

/// A widget call as the chat's visitor.
async fn visitor(app: &TestApp, chat: &Chat, method: Method, path: &str, body: Option<Value>) -> Response {
    let request = app
        .request(method, path)
        .header("rapport-widget-key", &chat.widget_key)
        .bearer_auth(&chat.token);
    match body {
        Some(body) => request.json(&body),
        None => request,
    }
    .send()
    .await
    .unwrap()
}

/// An agent's inbox stream (`GET /inbox/events`), read event by event.
struct InboxEvents {
    response: Response,
    /// What was read and not yet parsed into events.
    buffer: String,
}

impl InboxEvents {
    async fn open(app: &TestApp, cookie: &str) -> InboxEvents {
        let response = app
            .request(Method::GET, "/inbox/events")
            .header(header::COOKIE, cookie)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        InboxEvents {
            response,
            buffer: String::new(),
        }
    }

    /// The data of the next `name` event whose data satisfies `wanted`,
    /// skipping every other event.
    async fn next(&mut self, name: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            while let Some(end) = self.buffer.find("\n\n") {
                let event: String = self.buffer.drain(..end + 2).collect();
                let field = |key: &str| event.lines().find_map(|l| l.strip_prefix(key)).map(str::to_string);
                if field("event: ").as_deref() != Some(name) {
                    continue;
                }
                let data: Value = serde_json::from_str(&field("data: ").unwrap_or_default()).unwrap();
                if wanted(&data) {
                    return data;
                }
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .unwrap_or_else(|_| panic!("a {name} event within {WAIT:?}"))
                .unwrap()
                .expect("the stream stays open");
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

/// Whether an event's `by` is the visitor's.
fn by_visitor(data: &Value) -> bool {
    data["by"] == "VISITOR"
}

async fn typing_reaches_the_other_side_with_drafts_only_where_shown(db: TestDb) {
    let app = TestApp::start(db).await;
    let shop = chat(&app, "Shop", "ada@shop.test").await;
    let other = chat(&app, "Other shop", "ada@other.test").await;
    let mut inbox = InboxEvents::open(&app, &shop.cookie).await;
    let mut other_inbox = InboxEvents::open(&app, &other.cookie).await;
    let (mut socket, ready) = hello(&app, &shop.widget_key, &shop.token).await;
    assert_eq!(ready, json!({"event": "ready"}));

    // The visitor types: the agents see the draft; the visitor's socket hears
    // nothing of it.
    let typed = visitor(
        &app,
        &shop,
        Method::POST,
        "/rest/v1/widget/typing",
        Some(json!({"typing": true, "draft": "Where is my ord"})),
    )
    .await;
    assert_eq!(typed.status(), StatusCode::NO_CONTENT);
    let heard = inbox.next("typing", by_visitor).await;
    assert_eq!(
        heard,
        json!({"customerId": shop.customer, "by": "VISITOR", "userId": null, "name": null,
               "draft": "Where is my ord", "typing": true})
    );

    // Ada types in the dashboard: the visitor sees her name, and her own
    // inbox does not hear her.
    let form = [("customer_id", shop.customer.as_str()), ("typing", "true")];
    server_fn_ok(&app, "inbox_typing", &shop.cookie, &form).await;
    assert_eq!(
        frame(&mut socket).await,
        json!({"event": "typing", "name": "Ada", "typing": true})
    );

    // An integration types by the name it gives, and stops.
    let path = format!("/rest/v1/conversation/{}/typing", shop.customer);
    let bot = send(
        &app,
        Method::POST,
        &path,
        &shop.key,
        Some(json!({"typing": true, "name": "Order bot"})),
    )
    .await;
    assert_eq!(bot.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        frame(&mut socket).await,
        json!({"event": "typing", "name": "Order bot", "typing": true})
    );
    let heard = inbox.next("typing", |d| !by_visitor(d)).await;
    assert_eq!(
        heard["name"], "Order bot",
        "Ada's own typing is not hers to hear: {heard}"
    );
    send(&app, Method::POST, &path, &shop.key, Some(json!({"typing": false}))).await;
    assert_eq!(frame(&mut socket).await, json!({"event": "typing", "typing": false}));

    // Bad input names its field; another tenant's conversation is unknown.
    let missing = visitor(
        &app,
        &shop,
        Method::POST,
        "/rest/v1/widget/typing",
        Some(json!({"draft": "x"})),
    )
    .await;
    let problem = expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["typing"]);
    let long = json!({"typing": true, "draft": "é".repeat(501)});
    let long = visitor(&app, &shop, Method::POST, "/rest/v1/widget/typing", Some(long)).await;
    let problem = expect_problem(long, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["draft"]);
    let long_name = json!({"typing": true, "name": "n".repeat(101)});
    let problem = expect_problem(
        send(&app, Method::POST, &path, &shop.key, Some(long_name)).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), ["name"]);
    let foreign = format!("/rest/v1/conversation/{}/typing", other.customer);
    let foreign = send(&app, Method::POST, &foreign, &shop.key, Some(json!({"typing": true}))).await;
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;

    // With drafts kept to the visitor, the agents see only that they type.
    ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &shop.key,
            Some(json!({"typingPreview": false})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let workspace = ok_json(app.get("/rest/v1/workspace", &shop.key).await, StatusCode::OK).await;
    assert_eq!(workspace["typingPreview"], false);
    let typed = visitor(
        &app,
        &shop,
        Method::POST,
        "/rest/v1/widget/typing",
        Some(json!({"typing": true, "draft": "my card number is 4111"})),
    )
    .await;
    assert_eq!(typed.status(), StatusCode::NO_CONTENT);
    let heard = inbox.next("typing", by_visitor).await;
    assert_eq!((&heard["draft"], &heard["typing"]), (&Value::Null, &json!(true)));

    // The other shop heard none of it: its first event is its own.
    let typed = visitor(
        &app,
        &other,
        Method::POST,
        "/rest/v1/widget/typing",
        Some(json!({"typing": false})),
    )
    .await;
    assert_eq!(typed.status(), StatusCode::NO_CONTENT);
    let heard = other_inbox.next("typing", |_| true).await;
    assert_eq!(heard["customerId"], other.customer.as_str());
    // Open streams would keep the server from stopping.
    drop((inbox, other_inbox, socket));
    app.stop().await;
}

async fn read_marks_move_forward_and_reach_the_other_side(db: TestDb) {
    let app = TestApp::start(db).await;
    let shop = chat(&app, "Shop", "ada@shop.test").await;
    let other = chat(&app, "Other shop", "ada@other.test").await;
    let mut inbox = InboxEvents::open(&app, &shop.cookie).await;
    let (mut socket, _) = hello(&app, &shop.widget_key, &shop.token).await;
    let history = ok_json(
        visitor(&app, &shop, Method::GET, "/rest/v1/widget/message", None).await,
        StatusCode::OK,
    )
    .await;
    let asked = history["results"][0].clone();
    let reply = ok_json(
        app.post(
            "/rest/v1/message",
            &shop.key,
            json!({"customerId": shop.customer, "isExternalId": false, "type": "MESSAGE", "message": "On its way"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(frame(&mut socket).await["event"], "message");

    // Nothing read yet.
    let state = ok_json(
        visitor(&app, &shop, Method::GET, "/rest/v1/widget/read", None).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(state, json!({"visitorReadAt": null, "agentReadAt": null}));

    // The agents read the visitor's message: the visitor's socket hears it, and
    // the Conversation object says it.
    let read_path = format!("/rest/v1/conversation/{}/read", shop.customer);
    let state = ok_json(
        send(
            &app,
            Method::POST,
            &read_path,
            &shop.key,
            Some(json!({"messageId": asked["id"]})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(state["agentReadAt"], asked["createdAt"]);
    assert_eq!(
        frame(&mut socket).await,
        json!({"event": "read", "upTo": asked["createdAt"]})
    );
    let conversation = ok_json(
        app.get(&format!("/rest/v1/conversation/{}", shop.customer), &shop.key)
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(conversation["agentReadAt"], asked["createdAt"]);
    assert!(
        conversation.get("visitorReadAt").is_none(),
        "absent until read: {conversation}"
    );

    // The visitor reads the reply: the inbox hears it.
    let state = ok_json(
        visitor(
            &app,
            &shop,
            Method::POST,
            "/rest/v1/widget/read",
            Some(json!({"messageId": reply["id"]})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(state["visitorReadAt"], reply["createdAt"]);
    let heard = inbox.next("read", by_visitor).await;
    assert_eq!(heard["customerId"], shop.customer.as_str());

    // From the dashboard, up to the reply; then an older message moves nothing.
    let form = [
        ("customer_id", shop.customer.as_str()),
        ("message_id", reply["id"].as_str().unwrap()),
    ];
    server_fn_ok(&app, "inbox_read", &shop.cookie, &form).await;
    assert_eq!(
        frame(&mut socket).await,
        json!({"event": "read", "upTo": reply["createdAt"]})
    );
    let back = send(
        &app,
        Method::POST,
        &read_path,
        &shop.key,
        Some(json!({"messageId": asked["id"]})),
    )
    .await;
    assert_eq!(ok_json(back, StatusCode::OK).await["agentReadAt"], reply["createdAt"]);
    let thread = server_fn_ok(
        &app,
        "inbox_thread",
        &shop.cookie,
        &[("customer_id", shop.customer.as_str())],
    )
    .await;
    let reply_ms = chrono::DateTime::parse_from_rfc3339(reply["createdAt"].as_str().unwrap())
        .unwrap()
        .timestamp_millis();
    assert_eq!(thread["visitor_read_ms"], reply_ms);
    assert_eq!(thread["agent_read_ms"], reply_ms);

    // A message of another conversation, none at all, another tenant's customer.
    let other_history = ok_json(
        visitor(&app, &other, Method::GET, "/rest/v1/widget/message", None).await,
        StatusCode::OK,
    )
    .await;
    let foreign_message = json!({"messageId": other_history["results"][0]["id"]});
    let problem = expect_problem(
        visitor(
            &app,
            &shop,
            Method::POST,
            "/rest/v1/widget/read",
            Some(foreign_message.clone()),
        )
        .await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(problem["errors"][0]["code"], "unknown_reference");
    assert_eq!(fields(&problem), ["messageId"]);
    let problem = expect_problem(
        send(&app, Method::POST, &read_path, &shop.key, Some(json!({}))).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), ["messageId"]);
    let foreign = format!("/rest/v1/conversation/{}/read", other.customer);
    let foreign = send(&app, Method::POST, &foreign, &shop.key, Some(foreign_message)).await;
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    let state = ok_json(
        visitor(&app, &other, Method::GET, "/rest/v1/widget/read", None).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(state, json!({"visitorReadAt": null, "agentReadAt": null}), "untouched");
    drop((inbox, socket));
    app.stop().await;
}

backend_tests!(
    typing_reaches_the_other_side_with_drafts_only_where_shown,
    read_marks_move_forward_and_reach_the_other_side
);
