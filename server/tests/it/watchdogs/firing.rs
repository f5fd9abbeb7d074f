//! Each of the five watchdog types fires on its real event, and each kind of
//! receiver gets the alert: a mail, a notification, a signed webhook delivery.

use rapport_core::{backend_tests, model::Role, testing::TestDb, with_db};
use reqwest::{Method, StatusCode};
use serde_json::json;

use super::{script_errors, visitor, wait_for_mails, watchdog, TYPES, WAIT};
use crate::{
    receiver::Receiver,
    utils::{actor, expect_problem, fields, ok_json, TestApp},
};

async fn each_type_fires_on_its_real_event(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Alpha").await;
    let agent = app.user(&tenant, "agent@alpha.example", Role::Agent, false).await;
    let hook = Receiver::start().await;
    // A day's window: every watchdog alerts its first event at once, and the
    // rest of this test's events are only counted.
    app.services
        .set_watchdog_window(&tenant, 86_400, &actor())
        .await
        .unwrap();
    let receivers = json!([
        {"type": "EMAIL", "value": "ops@alpha.example"},
        {"type": "USER", "value": agent},
        {"type": "WEBHOOK", "value": hook.url},
    ]);
    // SETTING_CHANGED first: creating it is a settings write, so it alerts at
    // once; the next four creations are counted.
    let mut ids = Vec::new();
    for kind in TYPES.iter().rev() {
        ids.push(watchdog(&app, &key, &format!("Watch {kind}"), kind, receivers.clone()).await);
    }
    let settings_watchdog = ids[0].clone();
    ok_json(
        app.post("/rest/v1/team", &key, json!({"name": "Support"})).await,
        StatusCode::CREATED,
    )
    .await;

    // A customer message, then an assignment.
    let customer = ok_json(
        app.post("/rest/v1/customer", &key, json!({"firstName": "Eve"})).await,
        StatusCode::CREATED,
    )
    .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &key,
            json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": "Where is my order?"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(
            &format!("/rest/v1/customer/{customer}/assign"),
            &key,
            json!({"userId": agent}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    // A script error, and a visitor's contact form.
    let (widget_key, visitor_id, token) = visitor(&app, &key).await;
    script_errors(&app, &widget_key, "e", 1).await;
    let refused = app
        .request(Method::POST, "/rest/v1/widget/form")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&token)
        .json(&json!({"name": "Vera", "email": "not an address"}))
        .send()
        .await
        .unwrap();
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["email", "message"]);
    let form = ok_json(
        app.request(Method::POST, "/rest/v1/widget/form")
            .header("rapport-widget-key", &widget_key)
            .bearer_auth(&token)
            .json(
                &json!({"name": "Vera", "email": "vera@example.com", "message": "Please call me back.",
                          "fields": {"Phone": "+41 44 000 00 00"}, "url": "https://shop.example.com/contact"}),
            )
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    // The form is the visitor's message in its conversation.
    assert_eq!(form["customerId"], visitor_id.as_str());
    assert_eq!(form["direction"], "INBOUND");
    let text = form["message"].as_str().unwrap();
    assert!(
        text.starts_with("Contact form\nName: Vera\nE-mail: vera@example.com\n"),
        "{text}"
    );
    assert!(
        text.contains("Please call me back.") && text.contains("Phone: +41 44 000 00 00"),
        "{text}"
    );
    let thread = ok_json(
        app.get(&format!("/rest/v1/customer/{visitor_id}/message"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(thread["results"][0]["id"], form["id"], "{thread}");

    // Webhook: one signed delivery per type, with the tenant's alert secret.
    let secret = app.services.alert_secret(&tenant).await.unwrap();
    let got = hook.wait_for(5, WAIT).await;
    let mut kinds: Vec<String> = Vec::new();
    for delivery in &got {
        delivery.verify(&secret);
        assert_eq!(delivery.event_type(), "watchdog.alert");
        let alert = delivery.json();
        assert_eq!(alert["type"], "watchdog.alert", "{alert}");
        assert_eq!(alert["count"], 1, "{alert}");
        assert_eq!(alert["timezone"], "UTC", "{alert}");
        assert!(alert["localTime"].as_str().unwrap().ends_with("(UTC)"), "{alert}");
        assert!(
            alert["link"].as_str().unwrap().starts_with("http://rapport.test/"),
            "{alert}"
        );
        let kind = alert["kind"].as_str().unwrap().to_string();
        assert!(
            alert["title"].as_str().unwrap().starts_with(&format!("Watch {kind}: ")),
            "{alert}"
        );
        kinds.push(kind);
    }
    // The receiver URL is no subscription.
    let subscriptions = ok_json(app.get("/rest/v1/webhook", &key).await, StatusCode::OK).await;
    assert_eq!(subscriptions["page"]["totalElements"], 0, "{subscriptions}");
    kinds.sort();
    let mut expected: Vec<String> = TYPES.iter().map(|t| t.to_string()).collect();
    expected.sort();
    assert_eq!(kinds, expected);
    let by_kind = |k: &str| got.iter().map(|d| d.json()).find(|a| a["kind"] == k).unwrap();
    assert_eq!(
        by_kind("MESSAGE_RECEIVED")["link"],
        format!("http://rapport.test/inbox/{customer}")
    );
    assert!(
        by_kind("CUSTOMER_ASSIGNED")["body"]
            .as_str()
            .unwrap()
            .contains("Eve was assigned to agent@alpha.example"),
        "{}",
        by_kind("CUSTOMER_ASSIGNED")
    );
    assert!(by_kind("JAVASCRIPT_ERROR")["body"]
        .as_str()
        .unwrap()
        .starts_with("TypeError: x is undefined (e-0)"));
    assert_eq!(
        by_kind("FORM_SUBMISSION")["link"],
        format!("http://rapport.test/inbox/{visitor_id}")
    );
    assert!(by_kind("SETTING_CHANGED")["body"]
        .as_str()
        .unwrap()
        .starts_with("watchdog.create on watchdog"));

    // E-mail: one mail per type in the outbox.
    let mails = wait_for_mails(&app, &tenant, 5).await;
    for mail in &mails {
        assert_eq!(mail.to, "ops@alpha.example");
        assert!(mail.subject.starts_with("Watch "), "{}", mail.subject);
        assert!(mail.body.contains("Open: http://rapport.test/"), "{}", mail.body);
    }

    // The dashboard: five unread notifications for the agent.
    assert_eq!(app.services.unread_notifications(&tenant, &agent).await.unwrap(), 5);

    // SETTING_CHANGED counted the settings writes (the five watchdogs and the
    // team) and none of the customer, message, assignment or form actions.
    let counted: i64 = with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select cast(coalesce(sum(events), 0) as bigint) from watchdog_windows where tenant_id = $1 and watchdog_id = $2"
    )
    .bind(&tenant)
    .bind(&settings_watchdog)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(counted, 6);
    app.stop().await;
}

backend_tests!(each_type_fires_on_its_real_event,);
