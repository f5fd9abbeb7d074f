//! Status changes and the events they fire, checked at a real receiver: the
//! spec's lifecycle, and concurrent changes firing exactly the changes made.

use std::time::Duration;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::WAIT;
use crate::{
    receiver::Receiver,
    utils::{ok_json, poll_json, send, TestApp},
    webhooks::{key_id, subscribe},
};

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

backend_tests!(
    conversation_lifecycle_fires_exactly_the_spec_events,
    concurrent_status_changes_fire_exactly_the_changes_made
);
