//! Private notes: written by agents in the inbox and by integrations over REST,
//! read by agents only (never by the visitor's widget, never in a `message.*`
//! webhook), mentions notifying the named agent, `note.created` queued, and no
//! note counting as an answer.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::{
    dashboard::{server_fn, server_fn_ok, session},
    utils::{expect_problem, fields, ok_json, TestApp},
};

async fn notes_reach_agents_and_mentioned_colleagues_only(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.webhooks.worker = false).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (_, beta_key) = app.tenant_with_key("Beta").await;
    let sam = app.named_agent(&alpha, "sam@alpha.example", "Sam Smith").await;
    let kim = app.named_agent(&alpha, "kim@alpha.example", "Kim Lee").await;
    let (sam_session, kim_session) = (
        session(&app, "sam@alpha.example").await,
        session(&app, "kim@alpha.example").await,
    );
    let hook = ok_json(
        app.post("/rest/v1/webhook", &key, json!({"url": "https://example.com/hook"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let hook = hook["id"].as_str().unwrap().to_string();

    // A visitor writes in; the conversation waits for an answer.
    let widget_key = app.widget_key(&key).await;
    let (customer, visitor) = app.widget_visitor(&widget_key, "Eva").await;
    let written = app
        .request(Method::POST, "/rest/v1/widget/message")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&visitor)
        .json(&json!({"message": "Where is my refund?"}))
        .send()
        .await
        .unwrap();
    ok_json(written, StatusCode::CREATED).await;

    // Sam notes it in the inbox and names Kim; an integration names Sam by address.
    server_fn_ok(
        &app,
        "inbox_note",
        &sam_session,
        &[
            ("customer_id", &customer),
            ("text", "Order 1182 shipped late. @kim can you refund? @nobody"),
        ],
    )
    .await;
    let by_key = ok_json(
        app.post(
            &format!("/rest/v1/customer/{customer}/note"),
            &key,
            json!({"text": "CRM: VIP customer, @sam@alpha.example please call back."}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(by_key["authorType"], "apikey");
    assert_eq!(by_key["mentions"], json!([sam]));
    let listed = ok_json(
        app.get(&format!("/rest/v1/customer/{customer}/note"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(listed["page"]["totalElements"], 2);
    assert_eq!(listed["results"][0]["id"], by_key["id"]);
    assert_eq!(listed["results"][1]["authorId"], sam.as_str());
    assert_eq!(listed["results"][1]["mentions"], json!([kim]));

    // Kim's bell has it, linking to the conversation; Sam's has the other.
    let kims = server_fn_ok(&app, "list_notifications", &kim_session, &[]).await;
    assert_eq!(kims["unread"], 1, "{kims}");
    assert_eq!(kims["items"][0]["kind"], "MENTION");
    assert_eq!(kims["items"][0]["title"], "Sam Smith mentioned you");
    assert_eq!(kims["items"][0]["link"], format!("/inbox/{customer}"));
    assert!(
        kims["items"][0]["body"].as_str().unwrap().contains("Order 1182"),
        "{kims}"
    );
    let sams = server_fn_ok(&app, "list_notifications", &sam_session, &[]).await;
    assert_eq!(sams["items"][0]["title"], "An integration mentioned you", "{sams}");

    // The inbox shows both among the messages, Kim's mention marked.
    let thread = server_fn_ok(&app, "inbox_thread", &kim_session, &[("customer_id", &customer)]).await;
    let notes = thread["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{thread}");
    assert_eq!(
        (notes[0]["author"].as_str(), notes[0]["mentions_me"].as_bool()),
        (Some("Sam Smith"), Some(true))
    );
    assert_eq!(notes[1]["author"], "An integration");

    // The visitor sees none of it, the conversation still waits, and webhooks
    // got `note.created` twice and no `message.*` for either note.
    let history = app
        .request(Method::GET, "/rest/v1/widget/message")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&visitor)
        .send()
        .await
        .unwrap();
    let history = ok_json(history, StatusCode::OK).await;
    let shown = history.to_string();
    assert!(shown.contains("Where is my refund?"), "{history}");
    assert!(!shown.contains("1182") && !shown.contains("VIP"), "{history}");
    let conversation = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(conversation["status"], "UNREAD", "{conversation}");
    // Deliveries are written after the commit by the worker's fan-out; the
    // worker is off here, so the test does its step.
    app.services.fan_out_events().await.unwrap();
    let deliveries = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook}/delivery?pageSize=50"), &key)
            .await,
        StatusCode::OK,
    )
    .await;
    let types: Vec<&str> = deliveries["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(types.iter().filter(|t| **t == "note.created").count(), 2, "{types:?}");
    assert!(!types.contains(&"message.sent"), "{types:?}");
    let audit = ok_json(app.get("/rest/v1/audit?action=note.create", &key).await, StatusCode::OK).await;
    assert_eq!(audit["page"]["totalElements"], 2);

    // Refusals: a blank note, another workspace's customer.
    let blank = app
        .post(
            &format!("/rest/v1/customer/{customer}/note"),
            &key,
            json!({"text": "  "}),
        )
        .await;
    let blank = expect_problem(blank, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&blank), ["text"]);
    let foreign = app
        .post(
            &format!("/rest/v1/customer/{customer}/note"),
            &beta_key,
            json!({"text": "hi"}),
        )
        .await;
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    let foreign_list = ok_json(
        app.get(&format!("/rest/v1/customer/{customer}/note"), &beta_key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(foreign_list["page"]["totalElements"], 0);
    let stranger = server_fn(
        &app,
        "inbox_note",
        "rapport_session=nope",
        &[("customer_id", &customer), ("text", "x")],
    )
    .await;
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
}

backend_tests!(notes_reach_agents_and_mentioned_colleagues_only);
