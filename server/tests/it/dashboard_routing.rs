//! The dashboard's side of routing and SLAs over HTTP: the routing rules list in
//! the order they are tried with "Move up" / "Move down" (also as a plain form
//! post), a rule's recent matches, why a conversation was routed and its SLA
//! countdown in the inbox, and named system messages; roles and tenant isolation.

use rapport_core::{backend_tests, model::Role, testing::TestDb, time::now_ms};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, server_fn, server_fn_ok, session, Cast},
    routing_api::{customer_writes, queue_rule},
    utils::{ok_json, TestApp},
};

async fn html(app: &TestApp, path: &str, cookie: &str) -> String {
    let response = page(app, path, cookie).await;
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    response.text().await.unwrap()
}

/// Where `needle` first occurs in `haystack` (it must).
#[track_caller]
fn at(haystack: &str, needle: &str) -> usize {
    haystack
        .find(needle)
        .unwrap_or_else(|| panic!("{needle} is missing from {haystack}"))
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

async fn admins_order_routing_rules_and_see_their_matches(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let agent = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    // Made first, so tried first although its name sorts last.
    let zeta = queue_rule(&app, &key, "Zeta", &agent).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let alef = queue_rule(&app, &key, "Alef", &agent).await["id"]
        .as_str()
        .unwrap()
        .to_string();

    let list = server_fn_ok(&app, "list_rules", &admin, &[("kind", "Routing")]).await;
    assert_eq!(names(&list), ["Zeta", "Alef"], "{list}");
    let rules_page = html(&app, "/settings/routing-rules", &admin).await;
    assert!(
        at(&rules_page, ">Zeta<") < at(&rules_page, ">Alef<"),
        "tried first, listed first"
    );
    assert!(rules_page.contains(&format!(r#"id="move-{zeta}-down""#)));
    assert!(rules_page.contains(&format!(r#"id="move-{alef}-up""#)));
    assert!(
        !rules_page.contains(&format!(r#"id="move-{zeta}-up""#)),
        "the first has no Move up"
    );
    assert!(
        !rules_page.contains(&format!(r#"id="move-{alef}-down""#)),
        "the last no Move down"
    );
    assert!(rules_page.contains("Move up") && rules_page.contains("Move down"));

    // Moving swaps the two, and answers the button to focus again.
    let moved = server_fn_ok(&app, "move_rule", &admin, &[("id", alef.as_str()), ("direction", "up")]).await;
    assert_eq!(moved, json!(format!("move-{alef}-up")));
    let list = server_fn_ok(&app, "list_rules", &admin, &[("kind", "Routing")]).await;
    assert_eq!(names(&list), ["Alef", "Zeta"]);
    assert_eq!(list[0]["priority"], 10);
    let rest = ok_json(
        app.get(&format!("/rest/v1/rule/routing/{zeta}"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(rest["priority"], 20);
    // At the end it stays; a plain form post without JavaScript goes back to the list.
    server_fn_ok(&app, "move_rule", &admin, &[("id", alef.as_str()), ("direction", "up")]).await;
    let plain = app
        .request(Method::POST, "/api/move_rule")
        .header(header::COOKIE, &admin)
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}/settings/routing-rules", app.base))
        .form(&[("id", zeta.as_str()), ("direction", "up")])
        .send()
        .await
        .unwrap();
    assert!(plain.status().is_redirection(), "{}", plain.status());
    let list = server_fn_ok(&app, "list_rules", &admin, &[("kind", "Routing")]).await;
    assert_eq!(names(&list), ["Zeta", "Alef"]);
    let sideways = server_fn(
        &app,
        "move_rule",
        &admin,
        &[("id", zeta.as_str()), ("direction", "left")],
    )
    .await;
    assert_eq!(sideways.status(), StatusCode::UNPROCESSABLE_ENTITY);

    // The rule form shows the priority and keeps it when saved without one.
    let saved = server_fn_ok(&app, "get_rule", &admin, &[("kind", "Routing"), ("id", zeta.as_str())]).await;
    assert_eq!(saved["draft"]["priority"], 10);
    let rule_page = html(&app, &format!("/settings/routing-rules/{zeta}"), &admin).await;
    assert!(rule_page.contains(r#"id="r-priority""#), "the builder has the field");
    let json_field = &rule_page[at(&rule_page, r#"id="rule-json""#)..];
    assert!(
        json_field.contains("priority&quot;: 10") || json_field.contains(r#""priority": 10"#),
        "the JSON field holds it: {json_field}"
    );

    // A conversation the first rule routes shows on that rule's page.
    let customer = customer_writes(&app, &key, "Eve").await;
    let matches = server_fn_ok(&app, "rule_matches", &admin, &[("id", zeta.as_str())]).await;
    assert_eq!(matches.as_array().unwrap().len(), 1, "{matches}");
    assert_eq!(matches[0]["customer_id"], customer.as_str());
    assert_eq!(matches[0]["customer"], "Eve");
    assert_eq!(matches[0]["reason"], "new conversation");
    assert!(matches[0]["at"].as_str().unwrap().ends_with("UTC"), "{matches}");
    let rule_page = html(&app, &format!("/settings/routing-rules/{zeta}"), &admin).await;
    let section = &rule_page[at(&rule_page, "Recent matches")..];
    assert!(section.contains(&format!(r#"href="/inbox/{customer}""#)), "{section}");
    assert!(section.contains("new conversation"));
    let quiet = html(&app, &format!("/settings/routing-rules/{alef}"), &admin).await;
    assert!(quiet.contains("No conversation has matched this rule yet."));

    for name in ["move_rule", "rule_matches"] {
        let form = [("id", zeta.as_str()), ("direction", "down")];
        let refused = server_fn(&app, name, &supervisor, &form).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
        let unknown = server_fn(&app, name, &stranger, &form).await;
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND, "{name}");
    }
}

backend_tests!(admins_order_routing_rules_and_see_their_matches);

async fn agents_see_why_and_how_long_conversations_wait(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let agent_id = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let agent = session(&app, "agent@alpha.example").await;
    queue_rule(&app, &key, "Front desk", &agent_id).await;
    ok_json(
        app.post(
            "/rest/v1/rule/sla",
            &key,
            json!({"name": "Ten minutes", "conditions": [],
                "trigger": {"firstResponseSeconds": 600, "secondResponseSeconds": 600}}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;

    let before = now_ms();
    let customer = customer_writes(&app, &key, "Eve").await;
    let after = now_ms();
    let list = server_fn_ok(&app, "inbox_list", &agent, &[("status", "UNREAD"), ("mine", "false")]).await;
    let row = &list["rows"][0];
    assert_eq!(row["customer_id"], customer.as_str(), "{list}");
    assert_eq!(row["routed_by"], "Front desk");
    // Open around the clock (no business hours): ten minutes from the message.
    let due = row["sla_due_ms"].as_i64().expect("a deadline");
    assert!(
        due >= before + 600_000 && due <= after + 600_000,
        "{due} vs {before}..{after}"
    );
    assert!(list["now_ms"].as_i64().unwrap() >= before);

    let thread = server_fn_ok(&app, "inbox_thread", &agent, &[("customer_id", customer.as_str())]).await;
    assert_eq!(thread["routing"]["rules"], "Front desk", "{thread}");
    assert_eq!(thread["routing_history"].as_array().unwrap().len(), 1);

    let inbox = html(&app, &format!("/inbox/{customer}"), &agent).await;
    assert!(
        inbox.contains("Routed by rule Front desk — new conversation — "),
        "{inbox}"
    );
    assert!(inbox.contains("Routing history (1)"));
    assert!(inbox.contains("Rule: Front desk"), "the list's hint");
    let countdown = at(&inbox, "SLA due in");
    let span = &inbox[inbox[..countdown].rfind("<span").unwrap()..countdown];
    assert!(span.contains(r#"role="timer""#) && span.contains("sla"), "{span}");

    // An answer stops the clock: the countdown goes.
    ok_json(
        app.post(
            "/rest/v1/message",
            &key,
            json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": "Here"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let list = server_fn_ok(
        &app,
        "inbox_list",
        &agent,
        &[("status", "UNRESOLVED"), ("mine", "false")],
    )
    .await;
    assert_eq!(list["rows"][0]["sla_due_ms"], Value::Null, "{list}");
}

backend_tests!(agents_see_why_and_how_long_conversations_wait);

async fn system_messages_carry_the_name_their_translations_share(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast { key, admin, .. } = Cast::new(&app).await;
    let en = server_fn_ok(
        &app,
        "add_system_message",
        &admin,
        &[("language", "en"), ("message", "All busy."), ("name", " busy ")],
    )
    .await;
    assert_eq!(en["name"], "busy");
    let id = en["id"].as_str().unwrap().to_string();
    let rest = ok_json(
        app.get(&format!("/rest/v1/systemmessage/{id}"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(rest["name"], "busy");
    let page_html = html(&app, "/settings/system-messages", &admin).await;
    assert!(page_html.contains("Messages with the same name are translations of each other."));
    assert!(page_html.contains(r#"class="tag message-name">busy<"#), "{page_html}");
    let edit = html(&app, &format!("/settings/system-messages/{id}"), &admin).await;
    assert!(edit.contains(r#"name="name""#) && edit.contains(r#"value="busy""#));
    // The rule builder's picker names it.
    let refs = server_fn_ok(&app, "rule_references", &admin, &[]).await;
    assert_eq!(refs["system_messages"][0][1], "busy · [en] All busy.");

    let cleared = server_fn_ok(
        &app,
        "edit_system_message",
        &admin,
        &[
            ("id", id.as_str()),
            ("language", "en"),
            ("message", "All busy."),
            ("name", ""),
        ],
    )
    .await;
    assert_eq!(cleared["name"], "");
    let long = "n".repeat(201);
    let refused = server_fn(
        &app,
        "add_system_message",
        &admin,
        &[("language", "en"), ("message", "x"), ("name", long.as_str())],
    )
    .await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.text().await.unwrap().contains("name"));
}

backend_tests!(system_messages_carry_the_name_their_translations_share);
