//! Webhook delivery end to end: events reach a real HTTP receiver, signed (verified
//! with the published `standardwebhooks` crate), in order, retried, disabled on 410
//! or after failing too long, refused by the SSRF guard, replayed; and one tenant's
//! failing endpoints with a large backlog delay no one else.

use std::time::{Duration, Instant};

use rapport_core::{
    backend_tests,
    testing::{queue_backlog, TestDb},
    with_db,
};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    receiver::{Receiver, Reply},
    utils::{expect_problem, fields, ok_json, poll_json, send, TestApp},
};

const WAIT: Duration = Duration::from_secs(20);

/// Subscribes `url` to `events` (all when empty); returns `(id, secret)`.
pub async fn subscribe(app: &TestApp, token: &str, url: &str, events: &[&str]) -> (String, String) {
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

pub async fn key_id(app: &TestApp, token: &str) -> String {
    let keys = ok_json(app.get("/rest/v1/apikey", token).await, StatusCode::OK).await;
    keys["results"][0]["id"].as_str().unwrap().to_string()
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
    // The worker records an attempt just after the receiver answers it.
    let log = poll_json(&app, &format!("/rest/v1/webhook/{hook_id}/attempt"), &t, |l| {
        l["page"]["totalElements"] == 3
    })
    .await;
    let statuses: Vec<i64> = log["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["statusCode"].as_i64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 503, 500], "newest first");
    let deliveries = poll_json(&app, &format!("/rest/v1/webhook/{hook_id}/delivery"), &t, |d| {
        d["results"][0]["state"] == "succeeded"
    })
    .await;
    assert_eq!(deliveries["results"][0]["state"], "succeeded");

    // 410 Gone disables the endpoint, audited; later events wait.
    receiver.script([Reply::Status(410)]);
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    receiver.wait_for(4, WAIT).await;
    let endpoint = poll_json(&app, &format!("/rest/v1/webhook/{hook_id}"), &t, |e| {
        e["enabled"] == false
    })
    .await;
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
    let page = poll_json(&app, &format!("/rest/v1/webhook/{hook_id}/delivery"), &t, |p| {
        p["results"][0]["state"] == "failed"
    })
    .await;
    let delivery = &page["results"][0];
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
    let endpoint = poll_json(&app, &format!("/rest/v1/webhook/{hook_id}"), &t, |e| {
        e["failingSince"].is_null()
    })
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
    assert_eq!(
        catalogue.as_array().unwrap().len(),
        13,
        "every event type, csat.submitted and note.created included"
    );
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
    let app = TestApp::start_with(db, |c| {
        c.webhooks.allow_private_networks = rapport_server::webhooks::guard::AllowedNetworks::None
    })
    .await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let by_name = receiver.url.replace("127.0.0.1", "localhost");
    let (literal, _) = subscribe(&app, &t, &receiver.url, &["customer.created"]).await;
    let (named, _) = subscribe(&app, &t, &by_name, &["customer.created"]).await;
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    for hook in [literal, named] {
        let log = poll_json(&app, &format!("/rest/v1/webhook/{hook}/attempt"), &t, |l| {
            l["page"]["totalElements"].as_i64() > Some(0)
        })
        .await;
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

async fn an_endpoint_failing_past_the_limit_is_disabled_and_audited(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.webhooks.disable_after = "1s".into()).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    let receiver = Receiver::start().await;
    let (hook_id, _) = subscribe(&app, &t, &receiver.url, &["customer.created"]).await;
    receiver.script((0..20).map(|_| Reply::Status(500)));
    ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let endpoint = poll_json(&app, &format!("/rest/v1/webhook/{hook_id}"), &t, |e| {
        e["enabled"] == false
    })
    .await;
    assert_eq!(endpoint["enabled"], false, "{endpoint}");
    assert!(endpoint["disabledReason"]
        .as_str()
        .unwrap()
        .starts_with("every delivery failed for 1 s"));
    let audit = app
        .services
        .list_audit(&tenant, &Default::default(), &Default::default())
        .await
        .unwrap();
    assert!(audit
        .results
        .iter()
        .any(|e| e.action == "webhook.disable" && e.resource_id.as_deref() == Some(hook_id.as_str())));
    app.stop().await;
}

/// Failing endpoints of tenant A with a large backlog (names that do not
/// resolve, a port that refuses connections, a receiver answering 500) leave
/// tenant B's deliveries and both tenants' REST writes on time, and A's backlog
/// is held whole by each endpoint's circuit rather than attempted delivery by
/// delivery. Bounds are generous (debug builds, shared machines): what they catch
/// is a worker that spends itself on the backlog.
async fn a_failing_backlog_leaves_other_tenants_and_writes_on_time(db: TestDb) {
    const BACKLOG: usize = 5_000;
    let app = TestApp::start_with(db, |c| {
        c.rate_limit_per_token = 0;
        c.rate_limit_per_ip = 0;
    })
    .await;
    let (alpha, ta) = app.tenant_with_key("Alpha").await;
    let (_, tb) = app.tenant_with_key("Beta").await;
    let erroring = Receiver::start().await;
    erroring.script((0..100_000).map(|_| Reply::Status(500)));
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/hook", listener.local_addr().unwrap())
    };
    let mut failing = Vec::new();
    // Names that do not resolve, each its own lookup (which can hang until the
    // resolver's timeout): together they may not take every slot.
    let mut urls: Vec<String> = (0..4)
        .map(|n| format!("http://unresolvable-{n}.invalid/hook"))
        .collect();
    urls.push(closed);
    urls.push(erroring.url.clone());
    for url in &urls {
        failing.push(rapport_core::ids::WebhookId::from(
            subscribe(&app, &ta, url, &[]).await.0,
        ));
    }
    let queued = queue_backlog(&app.services, &alpha, &failing, BACKLOG).await.unwrap();
    assert_eq!(queued, failing.len() * BACKLOG);
    let healthy = Receiver::start().await;
    let (_, secret) = subscribe(&app, &tb, &healthy.url, &["customer.created"]).await;

    // Three seconds of traffic: A's endpoints are probed several times meanwhile.
    let mut slowest_write = Duration::ZERO;
    for n in 0..30 {
        let created = Instant::now();
        for token in [&tb, &ta] {
            let started = Instant::now();
            ok_json(
                app.post("/rest/v1/customer", token, json!({})).await,
                StatusCode::CREATED,
            )
            .await;
            slowest_write = slowest_write.max(started.elapsed());
        }
        let got = healthy.wait_for(n + 1, Duration::from_secs(5)).await;
        got[n].verify(&secret);
        let took = got[n].at.duration_since(created);
        assert!(took < Duration::from_secs(5), "Beta's event {n} took {took:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        slowest_write < Duration::from_secs(2),
        "a REST write took {slowest_write:?}"
    );

    // Each failing endpoint took one share of attempts, then was held and probed
    // one delivery at a time: the backlog itself was not attempted.
    let attempted: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select count(*) from webhook_deliveries where tenant_id = $1 and attempts > 0"
    )
    .bind(&alpha)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert!(attempted <= 6 * 40, "{attempted} of Alpha's deliveries were attempted");
    assert!(
        erroring.received().len() <= 40,
        "{} requests",
        erroring.received().len()
    );
    for hook in &failing {
        let endpoint = ok_json(app.get(&format!("/rest/v1/webhook/{hook}"), &ta).await, StatusCode::OK).await;
        assert!(endpoint["failingSince"].is_string(), "{endpoint}");
    }
    app.stop().await;
}

backend_tests!(
    retries_honour_retry_after_and_410_disables,
    exhausted_deliveries_fail_and_replay_with_the_same_id,
    rotation_signs_with_both_secrets_during_the_overlap,
    subscriptions_are_validated_and_isolated,
    the_ssrf_guard_refuses_private_addresses,
    one_customers_events_arrive_in_order_behind_a_failing_one,
    an_endpoint_failing_past_the_limit_is_disabled_and_audited,
    a_failing_backlog_leaves_other_tenants_and_writes_on_time,
);
