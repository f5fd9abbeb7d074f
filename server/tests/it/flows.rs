//! Flows over REST and from the dashboard: create, override, replace, list, get,
//! delete; content checked per message type at `messages[i].field`; `SEND_FLOW`
//! refers to a flow of the tenant, which cannot be deleted while a rule sends
//! it; audited; other tenants' flows are unknown.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, server_fn, server_fn_ok, Cast},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

fn welcome() -> Value {
    json!({"name": "Welcome", "messages": [
        {"type": "MESSAGE", "message": "Hi! An agent will be with you shortly."},
        {"type": "CARD", "message": "Meanwhile:", "buttonText": "Help centre", "buttonLink": "https://help.example.com"},
        {"type": "FILE", "url": "https://cdn.example.com/prices.pdf"}
    ]})
}

fn rule_sending(flow_id: &str) -> Value {
    json!({"name": "Greet", "types": ["CHAT"],
           "conditions": [{"type": "HAS_TAG", "tags": ["vip"]}],
           "actions": [{"type": "QUEUE", "target": {"type": "TAG", "value": "support"}}],
           "elseRules": [{"name": "Others", "types": ["CHAT"], "actions": [{"type": "SEND_FLOW", "flowId": flow_id}]}]})
}

async fn flows_over_rest(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;

    // Each message is checked by the rules of a message to a customer.
    let bad = app
        .post(
            "/rest/v1/flow",
            &t,
            json!({"name": " ", "messages": [
                {"type": "MESSAGE", "message": "fine"},
                {"type": "CARD", "buttonText": "Open"},
                {"type": "FILE", "url": "ftp://example.com/a.pdf"},
                {"message": "no type"}
            ]}),
        )
        .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&p),
        ["name", "messages[1].buttonLink", "messages[2].url", "messages[3].type"]
    );
    assert_eq!(p["errors"][2]["code"], "invalid_url");
    let empty = app.post("/rest/v1/flow", &t, json!({"name": "Empty"})).await;
    let p = expect_problem(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["messages"]);
    assert_eq!(p["errors"][0]["code"], "required");
    let many: Vec<Value> = (0..21)
        .map(|i| json!({"type": "MESSAGE", "message": format!("m{i}")}))
        .collect();
    let long = app
        .post("/rest/v1/flow", &t, json!({"name": "Long", "messages": many}))
        .await;
    let p = expect_problem(long, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(p["errors"][0]["code"], "too_many");
    let wrong_type = app
        .post(
            "/rest/v1/flow",
            &t,
            json!({"name": "x", "messages": [{"type": "POSTCARD"}]}),
        )
        .await;
    let p = expect_problem(wrong_type, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["messages[0].type"]);

    let flow = ok_json(app.post("/rest/v1/flow", &t, welcome()).await, StatusCode::CREATED).await;
    let id = flow["id"].as_str().unwrap().to_string();
    assert_eq!(flow["messages"].as_array().unwrap().len(), 3);
    assert_eq!(flow["messages"][1]["buttonLink"], "https://help.example.com");
    assert!(flow["createdAt"].is_string());

    // Override by id keeps the id and reorders; PUT replaces; unknown ids are 404.
    let reordered = json!({"id": id, "name": "Welcome back", "messages": [
        {"type": "FILE", "url": "https://cdn.example.com/prices.pdf"},
        {"type": "MESSAGE", "message": "  Hello again  "}
    ]});
    let over = ok_json(app.post("/rest/v1/flow", &t, reordered).await, StatusCode::OK).await;
    assert_eq!(over["id"], id.as_str());
    assert_eq!(over["messages"][0]["type"], "FILE");
    assert_eq!(over["messages"][1]["message"], "Hello again", "trimmed");
    let put = ok_json(
        send(&app, Method::PUT, &format!("/rest/v1/flow/{id}"), &t, Some(welcome())).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(put["name"], "Welcome");
    let unknown = app
        .post(
            "/rest/v1/flow",
            &t,
            json!({"id": "nope", "name": "x", "messages": [{"type": "MESSAGE", "message": "x"}]}),
        )
        .await;
    expect_problem(unknown, StatusCode::NOT_FOUND, "not_found").await;
    let got = ok_json(app.get(&format!("/rest/v1/flow/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(got, put);
    let list = ok_json(app.get("/rest/v1/flow", &t).await, StatusCode::OK).await;
    assert_eq!(list["page"]["totalElements"], 1);
    assert_eq!(list["results"][0]["id"], id.as_str());

    // Another tenant sees nothing, and cannot send Alpha's flow.
    expect_problem(
        app.get(&format!("/rest/v1/flow/{id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let foreign = app.post("/rest/v1/rule/routing", &other, rule_sending(&id)).await;
    let p = expect_problem(foreign, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["elseRules[0].actions[0].flowId"]);
    assert_eq!(p["errors"][0]["code"], "unknown_reference");
    let missing = app
        .post("/rest/v1/rule/routing", &t, rule_sending("no-such-flow"))
        .await;
    let p = expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["elseRules[0].actions[0].flowId"]);

    // A rule sends it: it cannot be deleted until the rule is gone.
    let rule = ok_json(
        app.post("/rest/v1/rule/routing", &t, rule_sending(&id)).await,
        StatusCode::CREATED,
    )
    .await;
    let del = send(&app, Method::DELETE, &format!("/rest/v1/flow/{id}"), &t, None).await;
    let p = expect_problem(del, StatusCode::CONFLICT, "in_use").await;
    assert!(p["detail"].as_str().unwrap_or_default().contains("Greet"), "{p}");
    let rule_id = rule["id"].as_str().unwrap();
    let gone = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/rule/routing/{rule_id}"),
        &t,
        None,
    )
    .await;
    assert_eq!(gone.status(), StatusCode::NO_CONTENT);
    let del = send(&app, Method::DELETE, &format!("/rest/v1/flow/{id}"), &t, None).await;
    assert_eq!(del.status(), StatusCode::NO_CONTENT);
    expect_problem(
        app.get(&format!("/rest/v1/flow/{id}"), &t).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // Every write is audited.
    let audit = ok_json(
        app.get("/rest/v1/audit?action=flow.*&pageSize=50", &t).await,
        StatusCode::OK,
    )
    .await;
    let mut actions: Vec<&str> = audit["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    actions.reverse();
    assert_eq!(actions, ["flow.create", "flow.update", "flow.update", "flow.delete"]);
}

async fn admins_edit_flows_in_the_dashboard(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let messages = |list: Value| list.to_string();

    // Problems name the message they concern.
    let bad = server_fn(
        &app,
        "save_flow",
        &admin,
        &[
            ("name", "Welcome"),
            ("messages", &messages(json!([{"type": "CARD", "buttonText": "Open"}]))),
        ],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(text.contains("messages[0].buttonLink"), "{text}");
    let not_json = server_fn(&app, "save_flow", &admin, &[("name", "Welcome"), ("messages", "[{")]).await;
    assert_eq!(not_json.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = not_json.text().await.unwrap();
    assert!(text.contains("not a JSON list"), "{text}");

    let saved = server_fn_ok(
        &app,
        "save_flow",
        &admin,
        &[
            ("name", "Welcome"),
            ("messages", &messages(welcome()["messages"].clone())),
        ],
    )
    .await;
    let id = saved["id"].as_str().unwrap().to_string();
    assert_eq!(saved["messages"][1]["button_link"], "https://help.example.com");

    // Reordered and one removed, as the editor posts it.
    let edited = server_fn_ok(
        &app,
        "save_flow",
        &admin,
        &[
            ("id", &id),
            ("name", "Welcome"),
            (
                "messages",
                &messages(json!([
                    {"type": "FILE", "url": "https://cdn.example.com/prices.pdf"},
                    {"type": "MESSAGE", "message": "Hi!"}
                ])),
            ),
        ],
    )
    .await;
    let kinds: Vec<&str> = edited["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["FILE", "MESSAGE"]);
    let list = server_fn_ok(&app, "list_flows", &admin, &[]).await;
    assert_eq!(list[0]["messages"], 2);
    assert_eq!(list[0]["first"], "https://cdn.example.com/prices.pdf");

    // The pages render it: the list, and the editor with the messages as JSON
    // (what the form submits before the editor is live).
    for (path, expected) in [
        ("/settings/flows".to_string(), "Welcome"),
        (format!("/settings/flows/{id}"), "prices.pdf"),
        ("/settings/flows/new".to_string(), "New flow"),
        ("/settings".to_string(), "/settings/flows"),
    ] {
        let response = page(&app, &path, &admin).await;
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let html = response.text().await.unwrap();
        assert!(html.contains(expected), "{path} shows {expected}");
    }

    // The rule builder offers it.
    let refs = server_fn_ok(&app, "rule_references", &admin, &[]).await;
    assert_eq!(refs["flows"], json!([[id, "Welcome"]]));

    // Supervisors may not; another tenant's admin finds nothing.
    assert_eq!(
        server_fn(&app, "list_flows", &supervisor, &[]).await.status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        server_fn(&app, "get_flow", &stranger, &[("id", &id)]).await.status(),
        StatusCode::NOT_FOUND
    );
    let foreign_edit = server_fn(
        &app,
        "save_flow",
        &stranger,
        &[("id", &id), ("name", "Mine"), ("messages", "[]")],
    )
    .await;
    assert_eq!(foreign_edit.status(), StatusCode::NOT_FOUND);

    server_fn_ok(&app, "remove_flow", &admin, &[("id", &id)]).await;
    assert_eq!(
        server_fn(&app, "get_flow", &admin, &[("id", &id)]).await.status(),
        StatusCode::NOT_FOUND
    );
}

backend_tests!(flows_over_rest, admins_edit_flows_in_the_dashboard);
