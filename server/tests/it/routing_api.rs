//! The routing engine's REST side: `PUT /rule/routing/order` (the order persists,
//! the engine follows it, refusals name `ids`), a rule's matches
//! (`GET /rule/routing/{id}/match`) and a conversation's decisions
//! (`GET /conversation/{customerId}/routing`), with their 404s and tenant
//! isolation.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

/// A routing rule without conditions that queues chats for `user_id`.
pub(crate) async fn queue_rule(app: &TestApp, key: &str, name: &str, user_id: &str) -> Value {
    ok_json(
        app.post(
            "/rest/v1/rule/routing",
            key,
            json!({
                "name": name,
                "types": ["CHAT"],
                "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": user_id}}]
            }),
        )
        .await,
        StatusCode::CREATED,
    )
    .await
}

/// A new customer who writes in: the message routes the conversation.
pub(crate) async fn customer_writes(app: &TestApp, key: &str, first_name: &str) -> String {
    let customer = ok_json(
        app.post("/rest/v1/customer", key, json!({"firstName": first_name}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let id = customer["id"].as_str().unwrap().to_string();
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            key,
            json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "Hello?"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    id
}

fn id_of(rule: &Value) -> String {
    rule["id"].as_str().unwrap().to_string()
}

async fn put_order(app: &TestApp, key: &str, ids: &[&str]) -> reqwest::Response {
    send(
        app,
        Method::PUT,
        "/rest/v1/rule/routing/order",
        key,
        Some(json!({"ids": ids})),
    )
    .await
}

async fn priority_of(app: &TestApp, key: &str, id: &str) -> Value {
    let rule = ok_json(
        app.get(&format!("/rest/v1/rule/routing/{id}"), key).await,
        StatusCode::OK,
    )
    .await;
    rule["priority"].clone()
}

async fn routing_rules_are_reordered_and_the_engine_follows(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let agent = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let beta_agent = app.user(&beta, "agent@beta.example", Role::Agent, false).await;

    // New rules go last, in the order they were made.
    let a = queue_rule(&app, &key, "A", &agent).await;
    let b = queue_rule(&app, &key, "B", &agent).await;
    let c = queue_rule(&app, &key, "C", &agent).await;
    let (a, b, c) = (id_of(&a), id_of(&b), id_of(&c));
    let foreign = id_of(&queue_rule(&app, &beta_key, "Theirs", &beta_agent).await);
    let before = [
        priority_of(&app, &key, &a).await,
        priority_of(&app, &key, &b).await,
        priority_of(&app, &key, &c).await,
    ];
    assert!(
        before[0].as_i64() < before[1].as_i64() && before[1].as_i64() < before[2].as_i64(),
        "{before:?}"
    );

    let ordered = ok_json(put_order(&app, &key, &[&c, &a, &b]).await, StatusCode::OK).await;
    let names: Vec<&str> = ordered
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["C", "A", "B"], "{ordered}");
    assert_eq!(ordered[0]["priority"], 10);
    assert_eq!(ordered[2]["priority"], 30);
    // It persists, and the rule keeps its priority when saved without one.
    assert_eq!(priority_of(&app, &key, &c).await, 10);
    assert_eq!(priority_of(&app, &key, &a).await, 20);
    let resaved = ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/rule/routing/{a}"),
            &key,
            Some(json!({"name": "A", "types": ["CHAT"],
                "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": agent}}]})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(resaved["priority"], 20);
    let audit = ok_json(
        app.get("/rest/v1/audit?action=routingrule.reorder", &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["results"].as_array().unwrap().len(), 1, "{audit}");

    // Refusals change nothing: another tenant's id is unknown; the list must be whole.
    let not_ours = put_order(&app, &key, &[&c, &a, &foreign]).await;
    expect_problem(not_ours, StatusCode::NOT_FOUND, "not_found").await;
    expect_problem(
        put_order(&app, &key, &[&c, "no-such-rule", &b]).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    for (ids, code) in [
        (vec![c.as_str(), a.as_str()], "incomplete"),
        (vec![c.as_str(), a.as_str(), b.as_str(), a.as_str()], "duplicate"),
        (vec![], "required"),
    ] {
        let refused = expect_problem(
            put_order(&app, &key, &ids).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await;
        assert_eq!(fields(&refused), ["ids"], "{refused}");
        assert_eq!(refused["errors"][0]["code"], code, "{refused}");
    }
    let shapeless = send(&app, Method::PUT, "/rest/v1/rule/routing/order", &key, Some(json!({}))).await;
    expect_problem(shapeless, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(priority_of(&app, &key, &c).await, 10);
    // Beta's order is its own.
    ok_json(put_order(&app, &beta_key, &[&foreign]).await, StatusCode::OK).await;

    // The first rule in the new order is the one that matches.
    let customer = customer_writes(&app, &key, "Eve").await;
    let decisions = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}/routing"), &key)
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(decisions.as_array().unwrap().len(), 1, "{decisions}");
    let decision = &decisions[0];
    assert_eq!(decision["customerId"], customer.as_str());
    assert_eq!(decision["reason"], "NEW");
    assert_eq!(decision["ruleId"], c.as_str(), "{decision}");
    assert_eq!(decision["ruleNames"], json!(["C"]));
    assert_eq!(decision["tried"][0]["name"], "C");
    assert_eq!(decision["tried"][0]["matched"], true);
    let result = decision["result"].as_str().unwrap();
    assert!(["ASSIGNED", "QUEUED"].contains(&result), "{decision}");

    // The rule's matches hold it; a rule that never matched has none.
    let matches = ok_json(
        app.get(&format!("/rest/v1/rule/routing/{c}/match?limit=5"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(matches.as_array().unwrap().len(), 1, "{matches}");
    assert_eq!(matches[0]["id"], decision["id"]);
    let none = ok_json(
        app.get(&format!("/rest/v1/rule/routing/{a}/match"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(none, json!([]));
}

backend_tests!(routing_rules_are_reordered_and_the_engine_follows);

async fn match_logs_answer_404_for_what_is_not_ours(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (_, beta_key) = app.tenant_with_key("Beta").await;
    let agent = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let rule = id_of(&queue_rule(&app, &key, "Everyone", &agent).await);
    let customer = customer_writes(&app, &key, "Eve").await;

    for path in [
        "/rest/v1/rule/routing/no-such-rule/match".to_string(),
        "/rest/v1/conversation/no-such-customer/routing".to_string(),
        format!("/rest/v1/rule/routing/{rule}/match"),
        format!("/rest/v1/conversation/{customer}/routing"),
    ] {
        let token = if path.contains("no-such") { &key } else { &beta_key };
        expect_problem(app.get(&path, token).await, StatusCode::NOT_FOUND, "not_found").await;
    }
    for limit in ["0", "201", "many"] {
        for path in [
            format!("/rest/v1/rule/routing/{rule}/match?limit={limit}"),
            format!("/rest/v1/conversation/{customer}/routing?limit={limit}"),
        ] {
            let refused = expect_problem(
                app.get(&path, &key).await,
                StatusCode::UNPROCESSABLE_ENTITY,
                "validation_failed",
            )
            .await;
            assert_eq!(fields(&refused), ["limit"], "{path}: {refused}");
        }
    }
    let one = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}/routing?limit=1"), &key)
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(one[0]["ruleId"], rule.as_str(), "{one}");
    let unauthenticated = app.get(&format!("/rest/v1/rule/routing/{rule}/match"), "nope").await;
    assert_eq!(unauthenticated.status(), StatusCode::UNAUTHORIZED);
}

backend_tests!(match_logs_answer_404_for_what_is_not_ours);

/// The rule a customer's first message was routed by.
async fn routed_by(app: &TestApp, key: &str, customer: &str) -> Value {
    let decisions = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}/routing"), key).await,
        StatusCode::OK,
    )
    .await;
    decisions[0]["ruleId"].clone()
}

/// A customer who writes in with an external id.
async fn known_customer_writes(app: &TestApp, key: &str, external_id: &str) -> String {
    let customer = ok_json(
        app.post("/rest/v1/customer", key, json!({"externalId": external_id}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            key,
            json!({"customerId": external_id, "isExternalId": true, "type": "MESSAGE", "message": "Hi"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    customer["id"].as_str().unwrap().to_string()
}

async fn has_id_rules_route_the_customers_they_name(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let agent = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let vip_rule = |ids: Value| {
        json!({
            "name": "VIP",
            "types": ["CHAT"],
            "conditions": [{"type": "HAS_ID", "ids": ids}],
            "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": agent}}]
        })
    };
    // An external id, and (once the customer exists) an internal one.
    let vip = id_of(
        &ok_json(
            app.post("/rest/v1/rule/routing", &key, vip_rule(json!(["crm-7"])))
                .await,
            StatusCode::CREATED,
        )
        .await,
    );
    let everyone = id_of(&queue_rule(&app, &key, "Everyone", &agent).await);

    let by_external = known_customer_writes(&app, &key, "crm-7").await;
    assert_eq!(routed_by(&app, &key, &by_external).await, vip.as_str());
    let stranger = known_customer_writes(&app, &key, "crm-8").await;
    assert_eq!(routed_by(&app, &key, &stranger).await, everyone.as_str());

    let customer = ok_json(
        app.post("/rest/v1/customer", &key, json!({"firstName": "Ida"})).await,
        StatusCode::CREATED,
    )
    .await;
    let by_id = customer["id"].as_str().unwrap().to_string();
    ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/rule/routing/{vip}"),
            &key,
            Some(vip_rule(json!([by_id]))),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &key,
            json!({"customerId": by_id, "isExternalId": false, "type": "MESSAGE", "message": "Hi"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(routed_by(&app, &key, &by_id).await, vip.as_str());
    // Its matches are the two conversations it routed.
    let tried = ok_json(
        app.get(&format!("/rest/v1/rule/routing/{vip}/match"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(tried.as_array().unwrap().len(), 2, "{tried}");

    // An empty list names no one, and is refused at its field.
    let refused = expect_problem(
        app.post("/rest/v1/rule/routing", &key, vip_rule(json!([]))).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&refused), ["conditions[0].ids"], "{refused}");
}

backend_tests!(has_id_rules_route_the_customers_they_name);
