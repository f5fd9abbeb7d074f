//! Chat transcripts by mail, on both backends: the visitor asks for one from
//! the widget and it lands in the outbox with the conversation as text (the
//! agent by name, never by address), at most once every 10 minutes per
//! customer and audited; bad input names its field; and a workspace that says
//! so mails one to the customer's address when a conversation is marked done,
//! which a spent mail allowance never stops from closing.

use rapport_core::{backend_tests, model::PageRequest, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn_ok, session},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

async fn transcripts_go_by_mail_on_request_and_on_close(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Tea Shop").await;
    app.named_agent(&tenant, "ada@teashop.test", "Ada").await;
    let cookie = session(&app, "ada@teashop.test").await;
    let widget_key = app.widget_key(&key).await;
    let (customer, token) = app.widget_visitor(&widget_key, "Vera").await;
    let widget = |path: &str, body: Value| {
        app.request(Method::POST, path)
            .header("rapport-widget-key", &widget_key)
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    ok_json(
        widget("/rest/v1/widget/message", json!({"message": "Is the Sencha in stock?"}))
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    let reply = [("customer_id", customer.as_str()), ("message", "Yes, plenty.")];
    server_fn_ok(&app, "inbox_reply", &cookie, &reply).await;
    let outbox = || async {
        app.services
            .list_mail(&tenant, &PageRequest::default())
            .await
            .unwrap()
            .results
    };

    // Bad input, and no address: nothing is written.
    let bad = widget("/rest/v1/widget/transcript", json!({"email": "not an address"}))
        .await
        .unwrap();
    let problem = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["email"]);
    let none = widget("/rest/v1/widget/transcript", json!({})).await.unwrap();
    let problem = expect_problem(none, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(problem["errors"][0]["code"], "required");
    assert!(outbox().await.is_empty());

    // Asked for: the conversation, as text, to the address given.
    let queued = ok_json(
        widget("/rest/v1/widget/transcript", json!({"email": " Vera@Example.com "}))
            .await
            .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(queued, json!({"to": "vera@example.com", "messages": 2}));
    let mails = outbox().await;
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(
        (mail.to.as_str(), mail.subject.as_str()),
        ("vera@example.com", "Your conversation with Tea Shop")
    );
    assert_eq!(mail.about.as_deref(), Some(format!("transcript:{customer}").as_str()));
    assert!(mail.body.contains("You: Is the Sencha in stock?"), "{}", mail.body);
    assert!(mail.body.contains("Ada: Yes, plenty."), "{}", mail.body);
    assert!(
        !mail.body.contains("ada@teashop.test"),
        "agents are named, not addressed"
    );

    // Once per 10 minutes: a page cannot make the server a mail cannon.
    let again = widget("/rest/v1/widget/transcript", json!({"email": "someone@example.com"}))
        .await
        .unwrap();
    let wait: u64 = again.headers()[header::RETRY_AFTER].to_str().unwrap().parse().unwrap();
    assert!((540..=600).contains(&wait), "about ten minutes: {wait}");
    expect_problem(again, StatusCode::TOO_MANY_REQUESTS, "transcript_too_soon").await;
    assert_eq!(outbox().await.len(), 1);
    let audit = ok_json(
        app.get("/rest/v1/audit?action=conversation.transcript", &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["page"]["totalElements"], 1, "{audit}");

    // Marked done: nothing by default; with transcriptOnClose, to the
    // customer's own address.
    let status = |s: &'static str| {
        let path = format!("/rest/v1/conversation/{customer}/status");
        let (app, key) = (&app, &key);
        async move {
            ok_json(
                send(app, Method::PUT, &path, key, Some(json!({ "status": s }))).await,
                StatusCode::OK,
            )
            .await
        }
    };
    status("DONE").await;
    assert_eq!(outbox().await.len(), 1, "off by default");
    ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &key,
            Some(json!({"transcriptOnClose": true})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    status("UNRESOLVED").await;
    status("DONE").await;
    assert_eq!(outbox().await.len(), 1, "a customer without an address gets none");
    ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/customer/{customer}"),
            &key,
            Some(json!({"email": "vera.s@example.com", "firstName": "Vera"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    status("UNRESOLVED").await;
    status("DONE").await;
    let mails = outbox().await;
    assert_eq!(mails.len(), 2);
    assert_eq!(mails[0].to, "vera.s@example.com");
    assert!(mails[0].body.contains("Ada: Yes, plenty."));

    // With the day's mails spent, the conversation still closes.
    let platform = app.platform_key().await;
    let limits = format!("/rest/v1/tenant/{tenant}/limits");
    ok_json(
        send(&app, Method::PUT, &limits, &platform, Some(json!({"mailsPerDay": 0}))).await,
        StatusCode::OK,
    )
    .await;
    status("UNRESOLVED").await;
    let closed = status("DONE").await;
    assert_eq!(closed["status"], "DONE");
    assert_eq!(outbox().await.len(), 2);
    app.stop().await;
}

backend_tests!(transcripts_go_by_mail_on_request_and_on_close);
