//! Text blocks: managed over REST and under Settings, chosen for the customer's
//! language and filled in for the inbox's picker, their uses counted when a
//! reply made from one is sent, and flows sent by hand from the same picker.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn, server_fn_ok, session, Cast},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    ok_json(app.post("/rest/v1/textblock", key, body).await, StatusCode::CREATED).await
}

async fn text_blocks_are_managed_over_rest(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (beta, beta_key) = app.tenant_with_key("Beta").await;
    let agent = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;
    let beta_agent = app.user(&beta, "agent@beta.example", Role::Agent, false).await;

    let hello = create(
        &app,
        &key,
        json!({"shortcut": "hello", "language": "en", "text": "Hi {customer.firstName|there}!"}),
    )
    .await;
    let id = hello["id"].as_str().unwrap().to_string();
    assert_eq!(hello["scope"], "TENANT");
    assert_eq!(hello["uses"], 0);
    assert_eq!(hello["teamId"], Value::Null);
    create(
        &app,
        &key,
        json!({"shortcut": "hello", "language": "de", "text": "Hallo!"}),
    )
    .await;
    create(
        &app,
        &key,
        json!({"shortcut": "bye", "text": "Bye", "scope": "USER", "userId": agent}),
    )
    .await;

    // One owner, one block per shortcut and language.
    let taken = app
        .post(
            "/rest/v1/textblock",
            &key,
            json!({"shortcut": "hello", "language": "en", "text": "Again"}),
        )
        .await;
    let taken = expect_problem(taken, StatusCode::CONFLICT, "shortcut_taken").await;
    assert_eq!(fields(&taken), ["shortcut"]);
    // …but the same shortcut is the agent's own to have.
    create(
        &app,
        &key,
        json!({"shortcut": "hello", "language": "en", "text": "Yo", "scope": "USER", "userId": agent}),
    )
    .await;

    // Refusals name their fields.
    for (body, field, code) in [
        (
            json!({"shortcut": "Hi There", "text": "x"}),
            "shortcut",
            "invalid_shortcut",
        ),
        (
            json!({"shortcut": "x", "text": "Hi {customer.nickname}"}),
            "text",
            "unknown_variable",
        ),
        (
            json!({"shortcut": "x", "text": "x", "language": "en_GB"}),
            "language",
            "invalid_language",
        ),
        (
            json!({"shortcut": "x", "text": "x", "scope": "TEAM"}),
            "teamId",
            "required",
        ),
        (
            json!({"shortcut": "x", "text": "x", "userId": agent}),
            "userId",
            "not_allowed",
        ),
        (
            json!({"shortcut": "x", "text": "x", "scope": "USER", "userId": beta_agent}),
            "userId",
            "unknown_reference",
        ),
        (json!({"shortcut": "x", "text": "   "}), "text", "required"),
    ] {
        let refused = expect_problem(
            app.post("/rest/v1/textblock", &key, body.clone()).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await;
        assert_eq!(fields(&refused), [field], "{body}: {refused}");
        assert_eq!(refused["errors"][0]["code"], code, "{body}: {refused}");
    }

    // Lists filter by shortcut, language and scope.
    let list = |query: &'static str| {
        let key = key.clone();
        let app = &app;
        async move {
            ok_json(
                app.get(&format!("/rest/v1/textblock{query}"), &key).await,
                StatusCode::OK,
            )
            .await
        }
    };
    let all = list("").await;
    assert_eq!(all["page"]["totalElements"], 4, "{all}");
    let shortcuts: Vec<&str> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["shortcut"].as_str().unwrap())
        .collect();
    assert_eq!(shortcuts, ["bye", "hello", "hello", "hello"]);
    assert_eq!(list("?shortcut=he&language=de").await["results"][0]["text"], "Hallo!");
    assert_eq!(list("?scope=USER").await["page"]["totalElements"], 2);
    assert_eq!(list("?language=").await["results"][0]["shortcut"], "bye");
    let bounded = app.get("/rest/v1/textblock?pageSize=201", &key).await;
    expect_problem(bounded, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;

    // Replace, read back, and delete; another tenant reaches none of it.
    let path = format!("/rest/v1/textblock/{id}");
    let replaced = ok_json(
        send(
            &app,
            Method::PUT,
            &path,
            &key,
            Some(json!({"shortcut": "hi", "text": "Hi {agent.firstName} here"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        (replaced["shortcut"].as_str(), replaced["language"].as_str()),
        (Some("hi"), None)
    );
    assert_eq!(ok_json(app.get(&path, &key).await, StatusCode::OK).await, replaced);
    expect_problem(app.get(&path, &beta_key).await, StatusCode::NOT_FOUND, "not_found").await;
    let foreign_put = send(
        &app,
        Method::PUT,
        &path,
        &beta_key,
        Some(json!({"shortcut": "x", "text": "x"})),
    )
    .await;
    expect_problem(foreign_put, StatusCode::NOT_FOUND, "not_found").await;
    let foreign_delete = send(&app, Method::DELETE, &path, &beta_key, None).await;
    expect_problem(foreign_delete, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(list("").await["page"]["totalElements"], 4);
    assert_eq!(
        send(&app, Method::DELETE, &path, &key, None).await.status(),
        StatusCode::NO_CONTENT
    );
    expect_problem(app.get(&path, &key).await, StatusCode::NOT_FOUND, "not_found").await;
    assert_eq!(
        ok_json(app.get("/rest/v1/textblock", &beta_key).await, StatusCode::OK).await["page"]["totalElements"],
        0
    );

    // Each change is audited.
    let audit = ok_json(app.get("/rest/v1/audit?action=textblock.*", &key).await, StatusCode::OK).await;
    let mut actions: Vec<&str> = audit["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    actions.sort();
    assert_eq!(
        actions,
        [
            "textblock.create",
            "textblock.create",
            "textblock.create",
            "textblock.create",
            "textblock.delete",
            "textblock.update"
        ]
    );
}

backend_tests!(text_blocks_are_managed_over_rest);

async fn agents_insert_blocks_for_the_customer_and_their_uses_are_counted(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        alpha,
        key,
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let agent_id = app.named_agent(&alpha, "sam@alpha.example", "Sam Smith").await;
    let agent = session(&app, "sam@alpha.example").await;
    let team = ok_json(
        app.post("/rest/v1/team", &key, json!({"name": "Billing", "members": [agent_id]}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let team_id = team["id"].as_str().unwrap();
    let other_team = ok_json(
        app.post("/rest/v1/team", &key, json!({"name": "Sales"})).await,
        StatusCode::CREATED,
    )
    .await;

    // Admins add blocks under Settings; supervisors may not.
    let add = |shortcut: &'static str, language: &'static str, text: &'static str, scope: &'static str, team: &str| {
        let form = vec![
            ("shortcut", shortcut.to_string()),
            ("language", language.to_string()),
            ("text", text.to_string()),
            ("scope", scope.to_string()),
            ("team_id", team.to_string()),
            ("user_id", String::new()),
        ];
        form
    };
    let call = |cookie: &str, form: Vec<(&'static str, String)>| {
        let cookie = cookie.to_string();
        let app = &app;
        async move {
            let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            server_fn(app, "add_text_block", &cookie, &form).await
        }
    };
    let refused = call(&supervisor, add("hello", "", "Hi", "TENANT", "")).await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    for form in [
        add(
            "hello",
            "en",
            "Hello {customer.firstName|there}, {agent.firstName} here.",
            "TENANT",
            "",
        ),
        add(
            "hello",
            "de",
            "Hallo {customer.firstName|zusammen}, hier ist {agent.displayName}.",
            "TENANT",
            "",
        ),
        // The team's own block wins over the workspace's for its members.
        add("refund", "", "Refunds take 5 days.", "TENANT", ""),
        add("refund", "", "Billing here: refunds take 3 days.", "TEAM", team_id),
        add("pricing", "", "Sales only.", "TEAM", other_team["id"].as_str().unwrap()),
    ] {
        let added = call(&admin, form).await;
        assert_eq!(added.status(), StatusCode::OK, "{}", added.text().await.unwrap());
    }
    let listed = server_fn_ok(&app, "list_text_blocks", &admin, &[("shortcut", "/ref")]).await;
    assert_eq!(listed["total"], 2, "{listed}");
    assert!(server_fn_ok(&app, "list_text_blocks", &stranger, &[]).await["blocks"]
        .as_array()
        .unwrap()
        .is_empty());

    // A customer who speaks Swiss German: the German block, filled in.
    let customer = ok_json(
        app.post(
            "/rest/v1/customer",
            &key,
            json!({"firstName": "Eva", "language": "de-CH"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let customer_id = customer["id"].as_str().unwrap();
    let flow = ok_json(
        app.post(
            "/rest/v1/flow",
            &key,
            json!({"name": "Returns", "messages": [{"type": "MESSAGE", "message": "Here is how returns work."}, {"type": "MESSAGE", "message": "Anything else?"}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let picker = server_fn_ok(&app, "inbox_picker", &agent, &[("customer_id", customer_id)]).await;
    let blocks = picker["blocks"].as_array().unwrap();
    let texts: Vec<(&str, &str)> = blocks
        .iter()
        .map(|b| (b["shortcut"].as_str().unwrap(), b["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        texts,
        [
            ("hello", "Hallo Eva, hier ist Sam Smith."),
            ("refund", "Billing here: refunds take 3 days.")
        ]
    );
    assert_eq!(picker["flows"], json!([[flow["id"], "Returns"]]));
    let stranger_picker = server_fn(&app, "inbox_picker", &stranger, &[("customer_id", customer_id)]).await;
    assert_eq!(stranger_picker.status(), StatusCode::NOT_FOUND);

    // The reply made from a block counts it; one naming another's block is
    // refused, and sends nothing.
    let hello = blocks[0]["id"].as_str().unwrap();
    server_fn_ok(
        &app,
        "inbox_reply",
        &agent,
        &[
            ("customer_id", customer_id),
            ("message", "Hallo Eva, hier ist Sam Smith."),
            ("text_block_id", hello),
        ],
    )
    .await;
    server_fn_ok(
        &app,
        "inbox_reply",
        &agent,
        &[
            ("customer_id", customer_id),
            ("message", "Typed by hand"),
            ("text_block_id", ""),
        ],
    )
    .await;
    let foreign = server_fn(
        &app,
        "inbox_reply",
        &agent,
        &[
            ("customer_id", customer_id),
            ("message", "Not mine"),
            ("text_block_id", "no-such-block"),
        ],
    )
    .await;
    assert_eq!(foreign.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let messages = ok_json(
        app.get(&format!("/rest/v1/customer/{customer_id}/message"), &key).await,
        StatusCode::OK,
    )
    .await;
    let texts: Vec<&str> = messages["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["Typed by hand", "Hallo Eva, hier ist Sam Smith."]);
    let block = ok_json(
        app.get(&format!("/rest/v1/textblock/{hello}"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(block["uses"], 1);
    let report = json!({"metrics": [{"metricName": "TEXT_BLOCKS_USED", "groupBy": "AGENT"}], "dateFilter": {"grouping": "TODAY"}});
    let report = ok_json(app.post("/rest/v1/report/message", &key, report).await, StatusCode::OK).await;
    let counted: i64 = report["results"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|bucket| bucket[agent_id.as_str()].as_str())
        .map(|v| v.parse::<i64>().unwrap())
        .sum();
    assert_eq!(counted, 1, "{report}");
    let by_block = json!({"metrics": [{"metricName": "TEXT_BLOCKS_USED", "groupBy": "TEXT_BLOCK"}], "dateFilter": {"grouping": "TODAY"}});
    let by_block = ok_json(
        app.post("/rest/v1/report/message", &key, by_block).await,
        StatusCode::OK,
    )
    .await;
    assert!(by_block.to_string().contains(hello), "{by_block}");

    // A flow sent by hand: its messages go out in order, and another tenant's
    // flow is unknown.
    server_fn_ok(
        &app,
        "inbox_send_flow",
        &agent,
        &[("customer_id", customer_id), ("flow_id", flow["id"].as_str().unwrap())],
    )
    .await;
    let messages = ok_json(
        app.get(&format!("/rest/v1/customer/{customer_id}/message"), &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(messages["results"][0]["message"], "Anything else?");
    assert_eq!(messages["results"][1]["message"], "Here is how returns work.");
    let unknown = server_fn(
        &app,
        "inbox_send_flow",
        &agent,
        &[("customer_id", customer_id), ("flow_id", "nope")],
    )
    .await;
    assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
}

backend_tests!(agents_insert_blocks_for_the_customer_and_their_uses_are_counted);
