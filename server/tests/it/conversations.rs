//! Conversations and messages end to end: the spec's status rules and the events
//! they fire (checked at a real receiver), per-type message rules and history,
//! concurrent status changes, and the visitor widget.

use std::time::Duration;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    receiver::Receiver,
    utils::{expect_problem, fields, ok_json, poll_json, send, TestApp},
    webhooks::{key_id, subscribe},
};

const WAIT: Duration = Duration::from_secs(20);

async fn conversation_lifecycle_fires_exactly_the_spec_events(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let (hook_id, secret) = subscribe(&app, &t, &receiver.url, &[]).await;

    let customer = ok_json(
        app.post(
            "/rest/v1/customer",
            &t,
            json!({"firstName": "Eve", "externalId": "crm-1"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let id = customer["id"].as_str().unwrap();
    let conversation = ok_json(
        app.get(&format!("/rest/v1/conversation/{id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(conversation["status"], "UNREAD", "the initial status");

    // Reply: UNREAD -> UNRESOLVED.
    ok_json(
        app.post(
            "/rest/v1/message",
            &t,
            json!({"customerId": "crm-1", "isExternalId": true, "type": "MESSAGE", "message": "Hello Eve"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    // The customer writes: UNRESOLVED -> UNREAD.
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &t,
            json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "Where is my order?"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let status = |s: &str| json!({ "status": s });
    let path = format!("/rest/v1/conversation/{id}/status");
    ok_json(
        send(&app, Method::PUT, &path, &t, Some(status("DONE"))).await,
        StatusCode::OK,
    )
    .await;
    // The same status again is no change.
    ok_json(
        send(&app, Method::PUT, &path, &t, Some(status("DONE"))).await,
        StatusCode::OK,
    )
    .await;
    // DONE -> UNREAD by a new message: a new conversation.
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &t,
            json!({"customerId": "crm-1", "isExternalId": true, "type": "FILE", "url": "https://cdn.example.com/invoice.pdf"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(&format!("/rest/v1/customer/{id}/assign"), &t, json!({})).await,
        StatusCode::OK,
    )
    .await;
    ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/customer/{id}"),
            &t,
            Some(json!({"firstName": "Evelyn", "externalId": "crm-1"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    // Deleting erases what is still queued about the customer: let the
    // twelve events so far arrive first.
    receiver.wait_for(12, WAIT).await;
    // …and be recorded as delivered: an event whose delivery is in flight stays.
    poll_json(
        &app,
        &format!("/rest/v1/webhook/{hook_id}/attempt?pageSize=50"),
        &t,
        |l| l["page"]["totalElements"] == 12,
    )
    .await;
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/customer/{id}"), &t, None)
            .await
            .status(),
        StatusCode::NO_CONTENT
    );

    let expected = [
        ("customer.created", None),
        ("conversation.created", Some("UNREAD")),
        ("conversation.status_changed", Some("UNRESOLVED")),
        ("message.sent", None),
        ("conversation.status_changed", Some("UNREAD")),
        ("message.received", None),
        ("conversation.status_changed", Some("DONE")),
        ("conversation.created", Some("UNREAD")),
        ("conversation.status_changed", Some("UNREAD")),
        ("message.received", None),
        ("customer.assigned", None),
        ("customer.updated", None),
        ("customer.deleted", None),
    ];
    let got = receiver.wait_for(expected.len(), WAIT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let got_after = receiver.received();
    assert_eq!(got_after.len(), expected.len(), "no extra deliveries");
    let apikey = key_id(&app, &t).await;
    for (delivery, (event, status)) in got.iter().zip(expected) {
        delivery.verify(&secret);
        assert_eq!(delivery.event_type(), event, "{:?}", delivery.json());
        assert!(delivery.header("webhook-id").starts_with("msg_"));
        assert!(delivery.header("rapport-delivery-id").starts_with("dlv_"));
        assert_eq!(delivery.header("rapport-actor"), format!("apikey:{apikey}"));
        assert_eq!(delivery.header("content-type"), "application/json");
        let body = delivery.json();
        if let Some(status) = status {
            // Exactly the spec's Conversation object.
            let mut keys: Vec<&str> = body.as_object().unwrap().keys().map(String::as_str).collect();
            keys.sort_unstable();
            assert_eq!(keys, ["customerId", "lastMessage", "status", "url"]);
            assert_eq!(body["status"], status);
            assert_eq!(body["customerId"], id);
            assert_eq!(body["url"], format!("http://rapport.test/inbox/{id}"));
        }
    }
    let received = &got[5].json();
    assert_eq!(received["direction"], "INBOUND");
    assert_eq!(received["message"], "Where is my order?");
    assert_eq!(received["externalId"], "crm-1");
    assert_eq!(got[4].json()["lastMessage"]["test"], "Where is my order?");
    assert_eq!(
        got[12].json(),
        json!({"id": id, "externalId": "crm-1"}),
        "the erased customer's ids alone"
    );
    let ids: std::collections::HashSet<&str> = got.iter().map(|d| d.header("webhook-id")).collect();
    assert_eq!(ids.len(), got.len(), "one webhook-id per event");

    // The delivery log has the erasure's attempt: the erasure took the
    // events about the customer, and their attempts, with it.
    let log = poll_json(
        &app,
        &format!("/rest/v1/webhook/{hook_id}/attempt?pageSize=50"),
        &t,
        |l| l["page"]["totalElements"] == 1,
    )
    .await;
    assert_eq!(log["page"]["totalElements"], 1);
    assert_eq!(log["results"][0]["statusCode"], 200);
    assert_eq!(log["results"][0]["responseExcerpt"], "ok");
    app.stop().await;
}

async fn messages_are_validated_per_type_and_kept(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let customer = ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let id = customer["id"].as_str().unwrap();

    let cases = [
        (json!({}), vec!["customerId", "isExternalId", "type"]),
        (
            json!({"customerId": id, "isExternalId": false, "type": "MESSAGE"}),
            vec!["message"],
        ),
        (
            json!({"customerId": id, "isExternalId": false, "type": "AUDIO", "url": "file:///etc/passwd"}),
            vec!["url"],
        ),
        (
            json!({"customerId": id, "isExternalId": false, "type": "VIDEO"}),
            vec!["url"],
        ),
        (
            json!({"customerId": id, "isExternalId": false, "type": "CARD", "buttonText": "Pay"}),
            vec!["buttonLink"],
        ),
    ];
    for (body, expected) in cases {
        let problem = expect_problem(
            app.post("/rest/v1/message", &t, body.clone()).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await;
        assert_eq!(fields(&problem), expected, "{body}");
    }
    let bad_type = app
        .post(
            "/rest/v1/message",
            &t,
            json!({"customerId": id, "isExternalId": false, "type": "FAX"}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad_type, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["type"]
    );
    // Unknown and foreign customers are 404, nothing is stored.
    let foreign = app
        .post(
            "/rest/v1/message",
            &other,
            json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "x"}),
        )
        .await;
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    expect_problem(
        app.get(&format!("/rest/v1/conversation/{id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    for body in [
        json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "one"}),
        json!({"customerId": id, "isExternalId": false, "type": "AUDIO", "url": "https://cdn.example.com/a.mp3"}),
        json!({"customerId": id, "isExternalId": false, "type": "CARD", "buttonText": "Pay", "buttonLink": "https://pay.example.com/1"}),
    ] {
        ok_json(app.post("/rest/v1/message", &t, body).await, StatusCode::CREATED).await;
    }
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{id}/message?pageSize=2"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(history["page"]["totalElements"], 3);
    assert_eq!(history["results"][0]["type"], "CARD", "newest first");
    assert_eq!(history["results"][1]["type"], "AUDIO");
    assert_eq!(history["results"][0]["direction"], "OUTBOUND");
    assert_eq!(
        history["results"][0]["deliveredAt"],
        Value::Null,
        "kept until the widget fetches it"
    );

    // Inbound with an unknown external id creates the customer.
    let inbound = ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &t,
            json!({"customerId": "wa-4915", "isExternalId": true, "type": "MESSAGE", "message": "hi"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(inbound["externalId"], "wa-4915");
    let unread = ok_json(app.get("/rest/v1/conversation?status=UNREAD", &t).await, StatusCode::OK).await;
    assert_eq!(unread["page"]["totalElements"], 1);
    assert_eq!(unread["results"][0]["lastMessage"]["text"], "hi");
    app.stop().await;
}

async fn concurrent_status_changes_fire_exactly_the_changes_made(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    subscribe(&app, &t, &receiver.url, &["conversation.status_changed"]).await;
    let customer = ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let id = customer["id"].as_str().unwrap().to_string();
    let path = format!("/rest/v1/conversation/{id}/status");
    let requests = (0..24).map(|n| {
        let status = ["DONE", "UNRESOLVED", "DONE", "UNREAD"][n % 4];
        send(&app, Method::PUT, &path, &t, Some(json!({ "status": status })))
    });
    for response in futures_util::future::join_all(requests).await {
        assert_eq!(response.status(), StatusCode::OK);
    }
    let audit = app
        .services
        .list_audit(
            &tenant,
            &Default::default(),
            &rapport_core::model::PageRequest {
                page_size: Some(200),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let changes = audit
        .results
        .iter()
        .filter(|e| e.action == "conversation.status")
        .count();
    assert!(changes > 0);
    let got = receiver.wait_for(changes, WAIT).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        receiver.received().len(),
        changes,
        "one event per change made, none for no-ops"
    );
    let mut previous = "UNREAD".to_string();
    for d in &got {
        let status = d.json()["status"].as_str().unwrap().to_string();
        assert_ne!(status, previous, "every event is a change");
        previous = status;
    }
    let stored = ok_json(
        app.get(&format!("/rest/v1/conversation/{id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(stored["status"], previous, "the last event is the stored state");
    app.stop().await;
}

async fn the_widget_talks_with_a_visitor(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let receiver = Receiver::start().await;
    let (_, secret) = subscribe(&app, &t, &receiver.url, &["message.received"]).await;
    let key = ok_json(app.get("/rest/v1/widget/key", &t).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let other_key = ok_json(app.get("/rest/v1/widget/key", &other).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(key.starts_with("wk_") && key != other_key);

    let widget = |method: Method, path: &str, widget_key: &str| {
        app.request(method, path)
            .header("rapport-widget-key", widget_key)
            .header("origin", "https://shop.example.com")
    };
    let anonymous = widget(Method::POST, "/rest/v1/widget/visitor", "wk_wrong")
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    expect_problem(anonymous, StatusCode::UNAUTHORIZED, "invalid_widget_key").await;
    let started = widget(Method::POST, "/rest/v1/widget/visitor", &key)
        .json(&json!({"firstName": "Vera", "id": "chosen-id"}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.headers()["access-control-allow-origin"], "*");
    let identity = ok_json(started, StatusCode::CREATED).await;
    let visitor_token = identity["visitorToken"].as_str().unwrap().to_string();
    let customer_id = identity["customerId"].as_str().unwrap().to_string();
    assert_ne!(customer_id, "chosen-id");

    // Another tenant's widget key does not open this visitor.
    let crossed = widget(Method::GET, "/rest/v1/widget/message", &other_key)
        .bearer_auth(&visitor_token)
        .send()
        .await
        .unwrap();
    expect_problem(crossed, StatusCode::UNAUTHORIZED, "invalid_visitor").await;

    // Live: a stream is open when the agent answers.
    let mut stream = widget(Method::GET, "/rest/v1/widget/stream", &key)
        .bearer_auth(&visitor_token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    let written = widget(Method::POST, "/rest/v1/widget/message", &key)
        .bearer_auth(&visitor_token)
        .json(&json!({"message": "Is the blue one in stock?"}))
        .send()
        .await
        .unwrap();
    let written = ok_json(written, StatusCode::CREATED).await;
    assert_eq!(written["channel"], "WIDGET");
    assert_eq!(written["senderType"], "customer");
    let hook = receiver.wait_for(1, WAIT).await;
    hook[0].verify(&secret);
    assert_eq!(hook[0].header("rapport-actor"), format!("customer:{customer_id}"));
    assert_eq!(hook[0].json()["message"], "Is the blue one in stock?");

    ok_json(
        app.post("/rest/v1/message", &t, json!({"customerId": customer_id, "isExternalId": false, "type": "MESSAGE", "message": "Yes, ships today."}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let mut seen = String::new();
    while !seen.contains("Yes, ships today.") {
        let chunk = tokio::time::timeout(WAIT, stream.chunk())
            .await
            .expect("a live event")
            .unwrap()
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(seen.contains("event: message"), "{seen}");
    drop(stream);

    // Sent while no stream is open: kept until the widget fetches it.
    ok_json(
        app.post("/rest/v1/message", &t, json!({"customerId": customer_id, "isExternalId": false, "type": "CARD", "buttonText": "Track", "buttonLink": "https://shop.example.com/track"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let page = widget(Method::GET, "/rest/v1/widget/message", &key)
        .bearer_auth(&visitor_token)
        .send()
        .await
        .unwrap();
    let page = ok_json(page, StatusCode::OK).await;
    assert_eq!(page["page"]["totalElements"], 3);
    assert_eq!(page["results"][0]["type"], "CARD");
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{customer_id}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    for m in history["results"].as_array().unwrap() {
        if m["direction"] == "OUTBOUND" {
            assert!(m["deliveredAt"].is_string(), "{m}");
        }
    }
    let card = widget(Method::POST, "/rest/v1/widget/message", &key)
        .bearer_auth(&visitor_token)
        .json(&json!({"type": "CARD"}))
        .send()
        .await
        .unwrap();
    expect_problem(card, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;

    // Rotating the key locks the old snippet out.
    ok_json(
        app.post("/rest/v1/widget/key/rotate", &t, json!({})).await,
        StatusCode::OK,
    )
    .await;
    let stale = widget(Method::GET, "/rest/v1/widget/message", &key)
        .bearer_auth(&visitor_token)
        .send()
        .await
        .unwrap();
    expect_problem(stale, StatusCode::UNAUTHORIZED, "invalid_visitor").await;
    app.stop().await;
}

/// The spec: "the request body is used as the message text". A `text/plain` body
/// is the text, and the other fields come as query parameters, checked by the
/// same rules as a JSON body's.
async fn a_text_body_is_the_message_text(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    ok_json(
        app.post("/rest/v1/customer", &t, json!({"externalId": "crm-7"})).await,
        StatusCode::CREATED,
    )
    .await;
    let plain = |token: &str, query: &str, body: &'static [u8]| {
        app.request(Method::POST, &format!("/rest/v1/message?{query}"))
            .bearer_auth(token)
            .header("content-type", "text/plain; charset=utf-8")
            .body(body)
            .send()
    };

    let sent = ok_json(
        plain(
            &t,
            "customerId=crm-7&isExternalId=true",
            "Grüße, your parcel left today".as_bytes(),
        )
        .await
        .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(
        sent["type"], "MESSAGE",
        "a text body is a MESSAGE unless the query says otherwise"
    );
    assert_eq!(sent["message"], "Grüße, your parcel left today");
    assert_eq!(sent["direction"], "OUTBOUND");
    let card = ok_json(
        plain(
            &t,
            "customerId=crm-7&isExternalId=true&type=CARD&buttonText=Track&buttonLink=https%3A%2F%2Fship.example.com%2F1",
            b"Your parcel",
        )
        .await
        .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(card["buttonLink"], "https://ship.example.com/1");

    // The same rules as JSON, naming the same fields.
    let missing = plain(&t, "", b"hello").await.unwrap();
    let problem = expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["customerId", "isExternalId"]);
    let empty = plain(&t, "customerId=crm-7&isExternalId=true", b"").await.unwrap();
    let problem = expect_problem(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["message"]);
    let not_utf8 = plain(&t, "customerId=crm-7&isExternalId=true", b"\xff\xfe")
        .await
        .unwrap();
    let problem = expect_problem(not_utf8, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["message"]);
    let bad_flag = plain(&t, "customerId=crm-7&isExternalId=maybe", b"hi").await.unwrap();
    let problem = expect_problem(bad_flag, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["isExternalId"]);
    // Another tenant cannot reach the customer; other media types stay 415.
    let foreign = plain(&other, "customerId=crm-7&isExternalId=true", b"hi")
        .await
        .unwrap();
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    let xml = app
        .request(Method::POST, "/rest/v1/message?customerId=crm-7&isExternalId=true")
        .bearer_auth(&t)
        .header("content-type", "application/xml")
        .body("<m/>")
        .send()
        .await
        .unwrap();
    expect_problem(xml, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;

    let history = ok_json(
        app.get("/rest/v1/conversation?status=UNRESOLVED", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        history["page"]["totalElements"], 1,
        "only the two good messages were stored"
    );
    app.stop().await;
}

backend_tests!(
    conversation_lifecycle_fires_exactly_the_spec_events,
    messages_are_validated_per_type_and_kept,
    a_text_body_is_the_message_text,
    concurrent_status_changes_fire_exactly_the_changes_made,
    the_widget_talks_with_a_visitor,
);
