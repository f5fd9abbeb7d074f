//! Ad-hoc video calls with a conversation's customer, on both backends: an
//! integration (or agent) starts one and the customer is invited in the chat;
//! a visitor asks for one from the chat and the rules for `CALL` (not those
//! for `CHAT`) route it, notify the agent and give them the call.

use chrono::Datelike;
use rapport_core::{backend_tests, model::PageRequest, model::Role, reports::api::PresenceStatus, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, ok_json, TestApp};

/// The visitor's messages, as the widget reads them.
async fn widget_messages(app: &TestApp, widget_key: &str, token: &str) -> Value {
    let listed = app
        .request(Method::GET, "/rest/v1/widget/message")
        .header("rapport-widget-key", widget_key)
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    ok_json(listed, StatusCode::OK).await
}

async fn an_integration_starts_a_call_and_the_customer_is_invited(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Calls").await;
    let (_, other) = app.tenant_with_key("Others").await;
    let widget_key = app.widget_key(&t).await;
    let (customer, token) = app.widget_visitor(&widget_key, "Vera").await;

    let started = ok_json(
        app.post(&format!("/rest/v1/conversation/{customer}/call"), &t, json!({}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let appointment = &started["appointment"];
    let invitation = &started["invitation"];
    assert_eq!(appointment["title"], "Video call with Vera");
    assert_eq!(appointment["customerId"], customer.as_str());
    assert_eq!(appointment["permissions"]["enableWaitingRoom"], false);
    assert_eq!(appointment["validType"], "HOURS");
    assert_eq!(
        (&invitation["type"], &invitation["buttonText"], &invitation["direction"]),
        (&json!("CARD"), &json!("Join the video call"), &json!("OUTBOUND"))
    );
    assert_eq!(invitation["buttonLink"], appointment["joinLink"]);
    // The link opens now: the call's page says so.
    let link = appointment["joinLink"].as_str().unwrap();
    let page = app
        .request(Method::GET, &format!("/join/{}", link.rsplit('/').next().unwrap()))
        .send()
        .await
        .unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.unwrap().contains("The conference is open."));

    // The visitor's chat holds the invitation.
    let messages = widget_messages(&app, &widget_key, &token).await;
    assert!(
        messages["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == invitation["id"] && m["buttonLink"] == appointment["joinLink"]),
        "{messages}"
    );

    // Another tenant cannot call this customer; nobody calls a customer who is not there.
    let foreign = app
        .post(&format!("/rest/v1/conversation/{customer}/call"), &other, json!({}))
        .await;
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    let missing = app.post("/rest/v1/conversation/nobody/call", &t, json!({})).await;
    expect_problem(missing, StatusCode::NOT_FOUND, "not_found").await;

    // A customer with the longest name a customer may have still gets a call,
    // whose title stays within its 200 characters.
    let long = "N".repeat(200);
    let (named, _) = app.widget_visitor(&widget_key, &long).await;
    let started = ok_json(
        app.post(&format!("/rest/v1/conversation/{named}/call"), &t, json!({}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let title = started["appointment"]["title"].as_str().unwrap();
    assert_eq!(title.chars().count(), 196, "{title}");
    assert!(
        title.starts_with("Video call with NNN") && title.ends_with('…'),
        "{title}"
    );
    app.stop().await;
}

/// A rule without conditions for `types` that queues for `user`.
async fn rule(app: &TestApp, key: &str, name: &str, types: Value, user: &str) {
    ok_json(
        app.post(
            "/rest/v1/rule/routing",
            key,
            json!({"name": name, "types": types,
                "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": user}}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
}

async fn a_visitor_asks_for_a_call_and_the_call_rules_route_it(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Routed calls").await;
    let chats = app.user(&tenant, "chats@calls.example", Role::Agent, false).await;
    let calls = app.user(&tenant, "calls@calls.example", Role::Agent, false).await;
    for user in [&chats, &calls] {
        app.services
            .set_presence(&tenant, user, PresenceStatus::Online)
            .await
            .unwrap();
    }
    rule(&app, &t, "Chats to Chad", json!(["CHAT"]), &chats).await;
    rule(&app, &t, "Calls to Cleo", json!(["CALL"]), &calls).await;
    let widget_key = app.widget_key(&t).await;

    // A chat goes by the chat rule.
    let (writer, writer_token) = app.widget_visitor(&widget_key, "Walt").await;
    let written = app
        .request(Method::POST, "/rest/v1/widget/message")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&writer_token)
        .json(&json!({"message": "Hello"}))
        .send()
        .await
        .unwrap();
    assert_eq!(written.status(), StatusCode::CREATED);
    let customer = ok_json(
        app.get(&format!("/rest/v1/customer/{writer}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(customer["assignedUser"], chats.as_str());

    // A call request goes by the call rule.
    let (caller, caller_token) = app.widget_visitor(&widget_key, "Cara").await;
    let asked = app
        .request(Method::POST, "/rest/v1/widget/call")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&caller_token)
        .send()
        .await
        .unwrap();
    let invitation = ok_json(asked, StatusCode::CREATED).await;
    assert_eq!(invitation["type"], "CARD");
    assert_eq!(invitation["customerId"], caller.as_str());
    assert_eq!(invitation["senderType"], "system");
    let customer = ok_json(
        app.get(&format!("/rest/v1/customer/{caller}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(customer["assignedUser"], calls.as_str(), "{customer}");
    let decisions = ok_json(
        app.get(&format!("/rest/v1/conversation/{caller}/routing"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(decisions[0]["reason"], "CALL_REQUESTED", "{decisions}");
    assert_eq!(decisions[0]["ruleNames"], json!(["Calls to Cleo"]));

    // The call is Cleo's, the visitor waits to be let in, and Cleo was told.
    let join = invitation["buttonLink"].as_str().unwrap();
    let (_, appointment) = app
        .services
        .appointment_by_join_token(join.rsplit('/').next().unwrap())
        .await
        .unwrap();
    assert_eq!(appointment.owner.as_deref(), Some(calls.as_str()));
    assert!(appointment.permissions.enable_waiting_room);
    assert_eq!(appointment.customer_id.as_deref(), Some(caller.as_str()));
    let told = app
        .services
        .list_notifications(&tenant, &calls, &PageRequest::default())
        .await
        .unwrap();
    assert_eq!(told.results.len(), 1, "{:?}", told.results);
    assert_eq!(told.results[0].kind, "CALL_REQUESTED");
    assert_eq!(told.results[0].title, "Cara asks for a video call");
    assert_eq!(
        told.results[0].link.as_deref(),
        Some(format!("/inbox/{caller}").as_str())
    );
    let chad = app
        .services
        .list_notifications(&tenant, &chats, &PageRequest::default())
        .await
        .unwrap();
    assert!(chad.results.is_empty(), "only the call's agent is told");

    // Asking again while the call is open gives the same invitation, and
    // starts (and notifies) nothing more.
    let again = app
        .request(Method::POST, "/rest/v1/widget/call")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&caller_token)
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(again, StatusCode::CREATED).await["id"], invitation["id"]);
    let told_again = app
        .services
        .list_notifications(&tenant, &calls, &PageRequest::default())
        .await
        .unwrap();
    assert_eq!(told_again.results.len(), 1);

    // While the workspace is closed (today a holiday), no call is started.
    let today = chrono::Utc::now().date_naive();
    let hours = ok_json(
        app.post(
            "/rest/v1/openinghours",
            &t,
            json!({"name": "Office", "timezone": "UTC",
                "conditions": [{"type": "WEEKDAY", "weekday": "EVERYDAY", "startHours": {"hour": 0, "minute": 0}, "endHours": {"hour": 23, "minute": 59}}],
                "holidays": [{"name": "Closed today", "from": {"year": today.year(), "month": today.month(), "day": today.day()}}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let closed = app
        .request(Method::PUT, "/rest/v1/workspace")
        .bearer_auth(&t)
        .json(&json!({"businessHoursId": hours["id"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(closed.status(), StatusCode::OK);
    let (_, late_token) = app.widget_visitor(&widget_key, "Late").await;
    let refused = app
        .request(Method::POST, "/rest/v1/widget/call")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&late_token)
        .send()
        .await
        .unwrap();
    expect_problem(refused, StatusCode::CONFLICT, "closed").await;

    // Without a visitor token there is no call.
    let anonymous = app
        .request(Method::POST, "/rest/v1/widget/call")
        .header("rapport-widget-key", &widget_key)
        .send()
        .await
        .unwrap();
    expect_problem(anonymous, StatusCode::UNAUTHORIZED, "missing_visitor_token").await;
    app.stop().await;
}

async fn a_queued_call_tells_the_agent_who_gets_it_later(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Queued calls").await;
    let cleo = app.user(&tenant, "cleo@queued.example", Role::Agent, false).await;
    rule(&app, &t, "Calls to Cleo", json!(["CALL"]), &cleo).await;
    let widget_key = app.widget_key(&t).await;

    // Cleo is offline: the call waits in the queue, and nobody is told yet.
    let (caller, token) = app.widget_visitor(&widget_key, "Quinn").await;
    let asked = app
        .request(Method::POST, "/rest/v1/widget/call")
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    ok_json(asked, StatusCode::CREATED).await;
    let decisions = ok_json(
        app.get(&format!("/rest/v1/conversation/{caller}/routing"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(decisions[0]["result"], "QUEUED", "{decisions}");
    let told = |app: &TestApp| {
        let (services, tenant, cleo) = (app.services.clone(), tenant.clone(), cleo.clone());
        async move {
            services
                .list_notifications(&tenant, &cleo, &PageRequest::default())
                .await
                .unwrap()
                .results
        }
    };
    assert!(told(&app).await.is_empty());

    // She comes online: the queue gives her the call, and she is told.
    app.services
        .set_presence(&tenant, &cleo, PresenceStatus::Online)
        .await
        .unwrap();
    let mut notes = Vec::new();
    for _ in 0..100 {
        notes = told(&app).await;
        if !notes.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0].title, "Quinn asks for a video call");
    let customer = ok_json(
        app.get(&format!("/rest/v1/customer/{caller}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(customer["assignedUser"], cleo.as_str());
    app.stop().await;
}

backend_tests!(
    an_integration_starts_a_call_and_the_customer_is_invited,
    a_visitor_asks_for_a_call_and_the_call_rules_route_it,
    a_queued_call_tells_the_agent_who_gets_it_later
);
