//! Settings → Routing, SLA and action rules over HTTP: the builder's JSON saved
//! through the server functions (with an else-rule), problems at nested paths,
//! match counts from recorded facts, the pickers' references, roles and tenant
//! isolation.

use rapport_core::{
    backend_tests, config::system_messages::SystemMessage, reports::facts::RuleKind, teams::TeamIn, testing::TestDb,
    time::now_ms,
};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, server_fn_ok, Cast},
    utils::{actor, TestApp},
};

async fn admins_build_routing_rules_with_else_branches(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let team = app
        .services
        .save_team(
            &alpha,
            TeamIn {
                name: Some("VIP desk".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    let message = app
        .services
        .save_system_message(
            &alpha,
            SystemMessage {
                language: Some("en".into()),
                message: Some("Everyone is busy".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    let message_id = message.meta.id.unwrap();

    // The pickers offer this tenant's references.
    let refs = server_fn_ok(&app, "rule_references", &admin, &[]).await;
    assert_eq!(refs["teams"], json!([[team.id, "VIP desk"]]));
    assert_eq!(refs["system_messages"][0][1], "[en] Everyone is busy");

    // Problems name nested paths; the else-rule points at another tenant's message.
    let mut rule = json!({
        "name": "VIP",
        "types": ["CHAT"],
        "conditions": [{"type": "HAS_TAG", "tags": ["vip"]}],
        "actions": [{"type": "QUEUE", "target": {"type": "TEAM", "value": team.id}}],
        "elseRules": [{
            "name": "Everyone else",
            "types": ["CHAT"],
            "actions": [{"type": "SYSTEM_MESSAGE", "systemMessageId": "not-here"}]
        }]
    });
    let bad = server_fn(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Routing"), ("rule", &rule.to_string())],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("elseRules[0].actions[0].systemMessageId"), "{text}");

    let garbled = server_fn(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Routing"), ("rule", "{\"name\": ")],
    )
    .await;
    assert_eq!(garbled.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(garbled.text().await.unwrap().contains("not valid JSON"));

    rule["elseRules"][0]["actions"][0]["systemMessageId"] = json!(message_id);
    let saved = server_fn_ok(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Routing"), ("rule", &rule.to_string())],
    )
    .await;
    let id = saved["id"].as_str().unwrap().to_string();
    assert_eq!(
        saved["draft"]["else_rules"][0]["actions"][0]["reference"],
        message_id.as_str()
    );
    // The REST API serves the same rule.
    let rest: Value = app
        .get(&format!("/rest/v1/rule/routing/{id}"), &key)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(rest["elseRules"][0]["name"], "Everyone else");
    assert_eq!(rest["actions"][0]["target"]["value"], team.id.as_str());

    // Matches over the last month come from the recorded facts.
    for _ in 0..3 {
        app.services
            .record_rule_match(&alpha, RuleKind::Routing, &id, None, now_ms() - 3_600_000)
            .await
            .unwrap();
    }
    let list = server_fn_ok(&app, "list_rules", &admin, &[("kind", "Routing")]).await;
    assert_eq!(list[0]["matches"], 3, "{list}");
    assert_eq!(list[0]["about"], "CHAT · 1 else-rule(s)");
    let one = server_fn_ok(&app, "get_rule", &admin, &[("kind", "Routing"), ("id", id.as_str())]).await;
    assert_eq!(one["matches"], 3);

    // Replacing keeps the id; an SLA rule is its own kind.
    rule["elseRules"] = json!([]);
    let replaced = server_fn_ok(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Routing"), ("id", id.as_str()), ("rule", &rule.to_string())],
    )
    .await;
    assert_eq!(replaced["id"], id.as_str());
    assert_eq!(replaced["draft"]["else_rules"], json!([]));
    let sla =
        json!({"name": "Fast", "conditions": [], "trigger": {"firstResponseSeconds": 0, "secondResponseSeconds": 300}});
    let slow = server_fn(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Sla"), ("rule", &sla.to_string())],
    )
    .await;
    assert_eq!(slow.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(slow.text().await.unwrap().contains("trigger.firstResponseSeconds"));

    let form = [("kind", "Routing"), ("id", id.as_str()), ("rule", "{}")];
    for name in ["list_rules", "get_rule", "save_rule", "remove_rule", "rule_references"] {
        let refused = server_fn(&app, name, &supervisor, &form).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
    }
    for name in ["get_rule", "save_rule", "remove_rule"] {
        let refused = server_fn(&app, name, &stranger, &form).await;
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{name}");
    }

    server_fn_ok(&app, "remove_rule", &admin, &[("kind", "Routing"), ("id", id.as_str())]).await;
    let gone = server_fn(&app, "get_rule", &admin, &[("kind", "Routing"), ("id", id.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

backend_tests!(admins_build_routing_rules_with_else_branches);

/// Settings → Action rules: the builder's JSON saved with kind `Action`, listed
/// with its matches (reported by the visitor script) and its summary, exported
/// and imported whole; admins only, each tenant its own.
async fn admins_manage_action_rules_and_move_them_as_json(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let rule = json!({
        "name": "Checkout help",
        "active": true,
        "trigger": "PAGE",
        "conditions": [{"type": "TIME_ON_PAGE", "seconds": 0}],
        "action": {"type": "OPEN_CHAT", "message": "Need a hand?"}
    });
    let bad = server_fn(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Action"), ("rule", &rule.to_string())],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(bad.text().await.unwrap().contains("conditions[0].seconds"));
    let mut rule = rule;
    rule["conditions"][0]["seconds"] = json!(30);
    let saved = server_fn_ok(
        &app,
        "save_rule",
        &admin,
        &[("kind", "Action"), ("rule", &rule.to_string())],
    )
    .await;
    let id = saved["id"].as_str().unwrap().to_string();
    assert_eq!(saved["draft"]["visitor_action"]["message"], "Need a hand?");
    assert_eq!(saved["draft"]["conditions"][0]["seconds"], 30);

    // The script reports two matches; the list counts them.
    let at = now_ms();
    let events: Vec<Value> = (0..2)
        .map(|n| json!({"type": "ACTION_RULE_MATCH", "id": format!("m{n}"), "ruleId": id, "at": at, "url": "https://shop.test/"}))
        .collect();
    let widget_key = app.widget_key(&key).await;
    let tracked = app
        .request(reqwest::Method::POST, "/rest/v1/widget/track")
        .header("rapport-widget-key", &widget_key)
        .json(&json!({ "events": events }))
        .send()
        .await
        .unwrap();
    assert_eq!(tracked.status(), StatusCode::ACCEPTED);
    let list = server_fn_ok(&app, "list_rules", &admin, &[("kind", "Action")]).await;
    assert_eq!(list[0]["matches"], 2, "{list}");
    assert_eq!(list[0]["about"], "When a page opens → Open the chat with a message");

    // Export, then import a copy under another name: the workspace has both.
    let exported = server_fn_ok(&app, "export_action_rules", &admin, &[]).await;
    let mut document: Value = serde_json::from_str(exported.as_str().unwrap()).unwrap();
    assert_eq!(document["rules"][0]["name"], "Checkout help");
    document["rules"][0]["id"] = Value::Null;
    document["rules"][0]["name"] = json!("Checkout help, copy");
    let imported = server_fn_ok(&app, "import_action_rules", &admin, &[("rules", &document.to_string())]).await;
    assert_eq!(imported, 1);
    let refused = server_fn(&app, "import_action_rules", &admin, &[("rules", "[1, 2")]).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let rest: Value = app.get("/rest/v1/rule/action", &key).await.json().await.unwrap();
    assert_eq!(rest["page"]["totalElements"], 2, "{rest}");

    for name in ["export_action_rules", "import_action_rules"] {
        let refused = server_fn(&app, name, &supervisor, &[("rules", "{\"rules\": []}")]).await;
        assert_eq!(refused.status(), StatusCode::FORBIDDEN, "{name}");
    }
    let theirs = server_fn(&app, "get_rule", &stranger, &[("kind", "Action"), ("id", id.as_str())]).await;
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);
    server_fn_ok(&app, "remove_rule", &admin, &[("kind", "Action"), ("id", id.as_str())]).await;
    let gone = server_fn(&app, "get_rule", &admin, &[("kind", "Action"), ("id", id.as_str())]).await;
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);
}

backend_tests!(admins_manage_action_rules_and_move_them_as_json);
