//! The visitor widget: its key, the visitor's identity, live and kept
//! messages, and key rotation.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::WAIT;
use crate::{
    receiver::Receiver,
    utils::{expect_problem, ok_json, TestApp},
    webhooks::subscribe,
};

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

backend_tests!(the_widget_talks_with_a_visitor);
