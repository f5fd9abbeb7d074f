//! Conversations, messages and webhooks end to end: events reach a real HTTP
//! receiver, signed (verified with the published `standardwebhooks` crate), in order,
//! retried, disabled on 410, refused by the SSRF guard, replayed.

use std::time::Duration;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    receiver::{Receiver, Reply},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

const WAIT: Duration = Duration::from_secs(20);

/// Subscribes `url` to `events` (all when empty); returns `(id, secret)`.
async fn subscribe(app: &TestApp, token: &str, url: &str, events: &[&str]) -> (String, String) {
    let created = ok_json(
        app.post("/rest/v1/webhook", token, json!({"url": url, "eventTypes": events}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let secret = created["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    (created["id"].as_str().unwrap().to_string(), secret)
}

async fn key_id(app: &TestApp, token: &str) -> String {
    let keys = ok_json(app.get("/rest/v1/apikey", token).await, StatusCode::OK).await;
    keys["results"][0]["id"].as_str().unwrap().to_string()
}

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
    assert_eq!(got[12].json()["firstName"], "Evelyn", "the deleted customer as it was");
    let ids: std::collections::HashSet<&str> = got.iter().map(|d| d.header("webhook-id")).collect();
    assert_eq!(ids.len(), got.len(), "one webhook-id per event");

    // The delivery log has every attempt.
    let log = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook_id}/attempt?pageSize=50"), &t)
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(log["page"]["totalElements"], expected.len());
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

async fn retries_honour_retry_after_and_410_disables(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let (hook_id, secret) = subscribe(&app, &t, &receiver.url, &["customer.created"]).await;
    receiver.script([Reply::Status(500), Reply::RetryAfter(503, 2)]);
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let got = receiver.wait_for(3, WAIT).await;
    for d in &got {
        d.verify(&secret);
        assert_eq!(
            d.header("webhook-id"),
            got[0].header("webhook-id"),
            "the same id on every retry"
        );
    }
    assert_eq!(
        got.iter()
            .map(|d| d.header("rapport-attempt").to_string())
            .collect::<Vec<_>>(),
        ["1", "2", "3"]
    );
    let pause = got[2].at - got[1].at;
    assert!(
        pause >= Duration::from_millis(1900),
        "Retry-After: 2 honoured, waited {pause:?}"
    );
    let log = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook_id}/attempt"), &t).await,
        StatusCode::OK,
    )
    .await;
    let statuses: Vec<i64> = log["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["statusCode"].as_i64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 503, 500], "newest first");
    let deliveries = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook_id}/delivery"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(deliveries["results"][0]["state"], "succeeded");

    // 410 Gone disables the endpoint, audited; later events wait.
    receiver.script([Reply::Status(410)]);
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    receiver.wait_for(4, WAIT).await;
    let mut endpoint = Value::Null;
    for _ in 0..50 {
        endpoint = ok_json(
            app.get(&format!("/rest/v1/webhook/{hook_id}"), &t).await,
            StatusCode::OK,
        )
        .await;
        if endpoint["enabled"] == false {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(endpoint["enabled"], false, "{endpoint}");
    assert_eq!(endpoint["disabledReason"], "the endpoint answered 410 Gone");
    let audit = app
        .services
        .list_audit(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap();
    assert!(audit
        .results
        .iter()
        .any(|e| e.action == "webhook.disable" && e.actor_id == "webhooks"));
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.received().len(), 4, "a disabled endpoint receives nothing");

    // Enabled again, it receives the events that happen from then on.
    ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/webhook/{hook_id}"),
            &t,
            Some(json!({"url": receiver.url, "eventTypes": ["customer.created"], "enabled": true})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    receiver.wait_for(5, WAIT).await;
    app.stop().await;
}

async fn exhausted_deliveries_fail_and_replay_with_the_same_id(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let (hook_id, _) = subscribe(&app, &t, &receiver.url, &["customer.created"]).await;
    // The test schedule is 200 ms, 400 ms, 800 ms: four attempts in all.
    receiver.script((0..4).map(|_| Reply::Status(500)));
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let got = receiver.wait_for(4, WAIT).await;
    let mut delivery = Value::Null;
    for _ in 0..50 {
        let page = ok_json(
            app.get(&format!("/rest/v1/webhook/{hook_id}/delivery"), &t).await,
            StatusCode::OK,
        )
        .await;
        delivery = page["results"][0].clone();
        if delivery["state"] == "failed" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(delivery["state"], "failed", "{delivery}");
    assert_eq!(delivery["attempts"], 4);
    assert_eq!(delivery["lastStatus"], 500);
    let endpoint = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook_id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert!(endpoint["failingSince"].is_string());

    let replay = format!(
        "/rest/v1/webhook/{hook_id}/delivery/{}/replay",
        delivery["id"].as_str().unwrap()
    );
    assert_eq!(app.post(&replay, &t, json!({})).await.status(), StatusCode::ACCEPTED);
    let again = receiver.wait_for(5, WAIT).await;
    assert_eq!(again[4].header("webhook-id"), got[0].header("webhook-id"));
    assert_eq!(again[4].header("rapport-attempt"), "1", "a fresh schedule");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let endpoint = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook_id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        endpoint["failingSince"],
        Value::Null,
        "a success clears the failure streak"
    );
    let missing = app
        .post(
            &format!("/rest/v1/webhook/{hook_id}/delivery/dlv_nope/replay"),
            &t,
            json!({}),
        )
        .await;
    expect_problem(missing, StatusCode::NOT_FOUND, "not_found").await;
    app.stop().await;
}

async fn rotation_signs_with_both_secrets_during_the_overlap(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let (hook_id, old) = subscribe(&app, &t, &receiver.url, &[]).await;
    let listed = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook_id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert!(listed.get("secret").is_none(), "the secret is shown once");

    let rotated = ok_json(
        app.post(
            &format!("/rest/v1/webhook/{hook_id}/secret/rotate"),
            &t,
            json!({"overlapSeconds": 3600}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let new = rotated["secret"].as_str().unwrap();
    assert_ne!(new, old);
    assert!(rotated["previousSecretExpiresAt"].is_string());
    let queued = ok_json(
        app.post(&format!("/rest/v1/webhook/{hook_id}/test"), &t, json!({}))
            .await,
        StatusCode::ACCEPTED,
    )
    .await;
    let got = receiver.wait_for(1, WAIT).await;
    assert_eq!(got[0].event_type(), "webhook.test");
    assert_eq!(got[0].header("webhook-id"), queued["eventId"]);
    assert_eq!(got[0].header("webhook-signature").split(' ').count(), 2);
    got[0].verify(new);
    got[0].verify(&old);

    // Without an overlap only the new secret signs.
    let rotated = ok_json(
        app.post(
            &format!("/rest/v1/webhook/{hook_id}/secret/rotate"),
            &t,
            json!({"overlapSeconds": 0}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let newest = rotated["secret"].as_str().unwrap();
    app.post(&format!("/rest/v1/webhook/{hook_id}/test"), &t, json!({}))
        .await;
    let got = receiver.wait_for(2, WAIT).await;
    assert_eq!(got[1].header("webhook-signature").split(' ').count(), 1);
    got[1].verify(newest);
    assert!(standardwebhooks::Webhook::new(new)
        .unwrap()
        .verify(&got[1].body, &got[1].headers)
        .is_err());

    let bad = app
        .post(
            &format!("/rest/v1/webhook/{hook_id}/secret/rotate"),
            &t,
            json!({"overlapSeconds": -1}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["overlapSeconds"]
    );
    app.stop().await;
}

async fn subscriptions_are_validated_and_isolated(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let bad = app
        .post(
            "/rest/v1/webhook",
            &t,
            json!({"url": "ftp://example.com", "eventTypes": ["message.received", "message.received", "nope"]}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["url", "eventTypes[1]", "eventTypes[2]"]
    );
    let (id, _) = subscribe(&app, &t, "https://hooks.example.com/rapport", &["message.received"]).await;
    let listed = ok_json(app.get("/rest/v1/webhook", &t).await, StatusCode::OK).await;
    assert_eq!(listed["results"][0]["eventTypes"], json!(["message.received"]));
    for path in [
        format!("/rest/v1/webhook/{id}"),
        format!("/rest/v1/webhook/{id}/attempt"),
    ] {
        expect_problem(app.get(&path, &other).await, StatusCode::NOT_FOUND, "not_found").await;
    }
    let catalogue = ok_json(app.get("/rest/v1/webhook/eventtypes", &t).await, StatusCode::OK).await;
    assert_eq!(catalogue.as_array().unwrap().len(), 9);
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/webhook/{id}"), &other, None)
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/webhook/{id}"), &t, None)
            .await
            .status(),
        StatusCode::NO_CONTENT
    );
    app.stop().await;
}

async fn the_ssrf_guard_refuses_private_addresses(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.webhooks.allow_private_networks = false).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let by_name = receiver.url.replace("127.0.0.1", "localhost");
    let (literal, _) = subscribe(&app, &t, &receiver.url, &["customer.created"]).await;
    let (named, _) = subscribe(&app, &t, &by_name, &["customer.created"]).await;
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    for hook in [literal, named] {
        let mut log = Value::Null;
        for _ in 0..100 {
            log = ok_json(
                app.get(&format!("/rest/v1/webhook/{hook}/attempt"), &t).await,
                StatusCode::OK,
            )
            .await;
            if log["page"]["totalElements"].as_i64() > Some(0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let error = log["results"][0]["error"].as_str().unwrap_or_default();
        assert!(error.starts_with("refused:"), "{log}");
        assert_eq!(log["results"][0]["statusCode"], Value::Null);
    }
    assert!(receiver.received().is_empty(), "nothing reached the private address");
    app.stop().await;
}

async fn one_customers_events_arrive_in_order_behind_a_failing_one(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let (_, secret) = subscribe(&app, &t, &receiver.url, &["message.sent"]).await;
    let customer = ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let id = customer["id"].as_str().unwrap();
    // The first delivery fails twice; the next four must wait behind it.
    receiver.script([Reply::Status(500), Reply::Status(502)]);
    for n in 0..5 {
        ok_json(
            app.post(
                "/rest/v1/message",
                &t,
                json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": format!("m{n}")}),
            )
            .await,
            StatusCode::CREATED,
        )
        .await;
    }
    let got = receiver.wait_for(7, WAIT).await;
    let texts: Vec<String> = got
        .iter()
        .map(|d| d.json()["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(texts, ["m0", "m0", "m0", "m1", "m2", "m3", "m4"]);
    for d in &got {
        d.verify(&secret);
    }
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

backend_tests!(
    conversation_lifecycle_fires_exactly_the_spec_events,
    messages_are_validated_per_type_and_kept,
    retries_honour_retry_after_and_410_disables,
    exhausted_deliveries_fail_and_replay_with_the_same_id,
    rotation_signs_with_both_secrets_during_the_overlap,
    subscriptions_are_validated_and_isolated,
    the_ssrf_guard_refuses_private_addresses,
    one_customers_events_arrive_in_order_behind_a_failing_one,
    concurrent_status_changes_fire_exactly_the_changes_made,
    the_widget_talks_with_a_visitor,
);
