//! Action rules, on both backends: managed over `/rest/v1/rule/action` (checked,
//! tenant-scoped, holding what they name), exported and imported all or none;
//! compiled for the visitor script (`GET /widget/rules`) with the agent state it
//! reads from `GET /widget/config`; a proactive message joins the conversation
//! only when the visitor answers it; and matches the script reports count as
//! `ACTION_RULE_MATCH_COUNT`, by rule.

use rapport_core::{backend_tests, reports::api::PresenceStatus, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

async fn action_rules_are_managed_compiled_answered_and_counted(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Shop").await;
    let (_, other) = app.tenant_with_key("Other shop").await;
    let key = app.widget_key(&t).await;
    let other_key = app.widget_key(&other).await;

    // Opening hours and a flow for rules to name.
    let hours = ok_json(
        app.post(
            "/rest/v1/openinghours",
            &t,
            json!({"name": "Office", "timezone": "UTC", "conditions": [{"type": "WEEKDAY", "weekday": "EVERYDAY",
                "startHours": {"hour": 0, "minute": 0}, "endHours": {"hour": 23, "minute": 59}}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let hours_id = hours["id"].as_str().unwrap().to_string();
    let flow = ok_json(
        app.post(
            "/rest/v1/flow",
            &t,
            json!({"name": "Welcome", "messages": [{"type": "MESSAGE", "message": "Welcome to the shop!"},
                {"type": "CARD", "message": "Our guide", "buttonText": "Read it", "buttonLink": "https://help.shop.test"}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let flow_id = flow["id"].as_str().unwrap().to_string();

    // Create: a checkout helper with every kind of condition the script tests.
    let checkout = json!({
        "name": "Checkout help",
        "trigger": "PAGE",
        "conditions": [
            {"type": "URL", "urls": ["https://shop.test/checkout*"]},
            {"type": "TIME_ON_PAGE", "seconds": 30},
            {"type": "AGENTS_BUSY", "negate": true},
            {"type": "OPENING_HOURS", "openingHoursId": hours_id},
            {"type": "TIME_WINDOW", "from": {"hour": 8, "minute": 0}, "to": {"hour": 20, "minute": 0}, "timeZone": "Europe/Berlin"},
            {"type": "HAS_TAG", "tags": ["vip"], "match": "ALL"},
            {"type": "JS_EVENT", "name": "cart-abandoned"},
            {"type": "REVISIT", "negate": true},
            {"type": "SENDS_MESSAGE", "negate": true}
        ],
        "action": {"type": "OPEN_CHAT", "message": "Need a hand with your order?"}
    });
    let created = ok_json(
        app.post("/rest/v1/rule/action", &t, checkout).await,
        StatusCode::CREATED,
    )
    .await;
    let checkout_id = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["active"], true);
    assert_eq!(created["conditions"][2], json!({"type": "AGENTS_BUSY", "negate": true}));
    let welcome = ok_json(
        app.post(
            "/rest/v1/rule/action",
            &t,
            json!({"name": "Welcome flow", "trigger": "CHAT", "action": {"type": "OPEN_CHAT", "flowId": flow_id}}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let welcome_id = welcome["id"].as_str().unwrap().to_string();
    let night = ok_json(
        app.post(
            "/rest/v1/rule/action",
            &t,
            json!({"name": "Night", "trigger": "PAGE", "active": false,
                "conditions": [{"type": "AGENTS_OFFLINE"}], "action": {"type": "HIDE_BUTTON"}}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let night_id = night["id"].as_str().unwrap().to_string();
    let list = ok_json(app.get("/rest/v1/rule/action", &t).await, StatusCode::OK).await;
    let names: Vec<&str> = list["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Checkout help", "Night", "Welcome flow"]);

    // Bad input names each field; another tenant's rule is not there.
    let bad = app
        .post(
            "/rest/v1/rule/action",
            &t,
            json!({"name": "Bad", "conditions": [{"type": "OPENING_HOURS", "openingHoursId": "nope"},
                {"type": "TIME_ON_PAGE", "seconds": 0}, {"type": "JS_EVENT", "name": " "}],
                "action": {"type": "OPEN_CHAT", "message": "Hi", "flowId": flow_id}}),
        )
        .await;
    let problem = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&problem),
        [
            "trigger",
            "conditions[1].seconds",
            "conditions[2].name",
            "action.message",
            "conditions[0].openingHoursId"
        ]
    );
    let unknown = app
        .post(
            "/rest/v1/rule/action",
            &t,
            json!({"name": "Bad", "trigger": "SOMETIMES", "action": {"type": "HIDE_BUTTON"}}),
        )
        .await;
    expect_problem(unknown, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let theirs = app.get(&format!("/rest/v1/rule/action/{checkout_id}"), &other).await;
    expect_problem(theirs, StatusCode::NOT_FOUND, "not_found").await;

    // What a rule names cannot be deleted under it.
    let in_use = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/openinghours/{hours_id}"),
        &t,
        None,
    )
    .await;
    let problem = expect_problem(in_use, StatusCode::CONFLICT, "in_use").await;
    assert!(
        problem.to_string().contains("action rule \\\"Checkout help\\\""),
        "{problem}"
    );
    let in_use = send(&app, Method::DELETE, &format!("/rest/v1/flow/{flow_id}"), &t, None).await;
    expect_problem(in_use, StatusCode::CONFLICT, "in_use").await;

    // Compiled for the script: active rules only, time as intervals, a flow as
    // its messages; cached by the browser; each workspace its own.
    let compiled = app
        .request(Method::GET, "/rest/v1/widget/rules")
        .header("rapport-widget-key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        compiled.headers()["cache-control"].to_str().unwrap(),
        "private, max-age=300"
    );
    let compiled = ok_json(compiled, StatusCode::OK).await;
    assert_eq!(compiled["maxAgeSeconds"], 300);
    let rules = compiled["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [checkout_id.as_str(), welcome_id.as_str()], "{compiled}");
    let conditions = &rules[0]["conditions"];
    assert_eq!(
        conditions[0],
        json!({"type": "URL", "urls": ["https://shop.test/checkout*"], "negate": false})
    );
    assert_eq!(conditions[3]["type"], "TIME");
    let now = chrono::Utc::now().timestamp_millis();
    let open_now = conditions[3]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .any(|i| i[0].as_i64().unwrap() <= now && now < i[1].as_i64().unwrap());
    let minute_of_day = (now / 60_000) % 1440;
    assert_eq!(open_now, minute_of_day < 23 * 60 + 59, "{}", conditions[3]);
    // 08:00 to 20:00 in Berlin, every day for the next 8 days (plus today's).
    let windows = conditions[4]["intervals"].as_array().unwrap();
    assert!((8..=9).contains(&windows.len()), "{}", conditions[4]);
    for w in windows {
        assert_eq!(w[1].as_i64().unwrap() - w[0].as_i64().unwrap(), 12 * 3_600_000);
    }
    assert_eq!(
        conditions[5],
        json!({"type": "HAS_TAG", "tags": ["vip"], "match": "ALL", "negate": false})
    );
    assert_eq!(rules[0]["action"]["message"], "Need a hand with your order?");
    assert_eq!(rules[1]["trigger"], "CHAT");
    assert_eq!(rules[1]["action"]["messages"][1]["buttonText"], "Read it");
    let theirs = app
        .request(Method::GET, "/rest/v1/widget/rules")
        .header("rapport-widget-key", &other_key)
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(theirs, StatusCode::OK).await["rules"], json!([]));

    // The agent state the agent conditions read.
    let config = |key: String| {
        let app = &app;
        async move {
            let response = app
                .request(Method::GET, "/rest/v1/widget/config")
                .header("rapport-widget-key", &key)
                .send()
                .await
                .unwrap();
            ok_json(response, StatusCode::OK).await["agents"].clone()
        }
    };
    assert_eq!(config(key.clone()).await, json!({"online": false, "available": false}));
    let ada = app.named_agent(&tenant, "ada@shop.test", "Ada").await;
    ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/user/{ada}"),
            &t,
            Some(json!({"email": "ada@shop.test", "displayName": "Ada", "maxConcurrentChats": 1})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    app.services
        .set_presence(&tenant, &ada, PresenceStatus::Online)
        .await
        .unwrap();
    assert_eq!(config(key.clone()).await, json!({"online": true, "available": true}));
    assert_eq!(
        config(other_key.clone()).await,
        json!({"online": false, "available": false})
    );

    // A proactive message joins the conversation when the visitor answers it.
    let (customer, token) = app.widget_visitor(&key, "Vera").await;
    let answer = |body: Value| {
        app.request(Method::POST, "/rest/v1/widget/message")
            .header("rapport-widget-key", &key)
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    ok_json(
        answer(json!({"message": "Yes, the coupon fails", "actionRuleId": checkout_id}))
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    let thread = ok_json(
        app.get(&format!("/rest/v1/customer/{customer}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    // Newest first: read it the way it was written.
    let said: Vec<(String, String, String)> = thread["results"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|m| {
            (
                m["direction"].as_str().unwrap().to_string(),
                m["channel"].as_str().unwrap().to_string(),
                m["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected = [
        ("OUTBOUND", "AUTOMATION", "Need a hand with your order?"),
        ("INBOUND", "WIDGET", "Yes, the coupon fails"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(said, expected, "{thread}");
    // The conversation waits for an agent: the greeting answered nobody.
    let conversation = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(conversation["status"], "UNREAD");
    // Assigned to Ada, her one place is taken: nobody is available.
    ok_json(
        app.post(
            &format!("/rest/v1/customer/{customer}/assign"),
            &t,
            json!({"userId": ada}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(config(key.clone()).await, json!({"online": true, "available": false}));

    // A flow rule stores the flow; a rule that opens nothing, or another
    // workspace's, or none at all, leaves the message alone, never lost.
    let (customer2, token2) = app.widget_visitor(&key, "Walt").await;
    let answer2 = |body: Value| {
        app.request(Method::POST, "/rest/v1/widget/message")
            .header("rapport-widget-key", &key)
            .bearer_auth(&token2)
            .json(&body)
            .send()
    };
    for rule in [welcome_id.as_str(), night_id.as_str(), "no-such-rule"] {
        ok_json(
            answer2(json!({"message": "Hello", "actionRuleId": rule}))
                .await
                .unwrap(),
            StatusCode::CREATED,
        )
        .await;
    }
    let thread = ok_json(
        app.get(&format!("/rest/v1/customer/{customer2}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    let texts: Vec<&str> = thread["results"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|m| m["message"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        texts,
        ["Welcome to the shop!", "Our guide", "Hello", "Hello", "Hello"],
        "{thread}"
    );
    let long = answer2(json!({"message": "Hi", "actionRuleId": "x".repeat(201)}))
        .await
        .unwrap();
    let problem = expect_problem(long, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["actionRuleId"]);

    // Matches the script reports: counted once per event id, a deleted rule's
    // skipped, and reported by rule.
    let at = chrono::Utc::now().timestamp_millis();
    let matched = |id: &str, rule: &str| {
        json!({"type": "ACTION_RULE_MATCH", "id": id, "ruleId": rule, "at": at,
            "visitorId": "v1", "url": "https://shop.test/checkout"})
    };
    let track = |events: Vec<Value>| {
        app.request(Method::POST, "/rest/v1/widget/track")
            .header("rapport-widget-key", &key)
            .json(&json!({ "events": events }))
            .send()
    };
    let result = ok_json(
        track(vec![
            matched("m1", &checkout_id),
            matched("m2", &checkout_id),
            matched("m3", &welcome_id),
            matched("m4", "deleted-rule"),
        ])
        .await
        .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(result, json!({"accepted": 3, "duplicates": 0, "ignored": 1}));
    let again = ok_json(
        track(vec![matched("m1", &checkout_id)]).await.unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(again, json!({"accepted": 0, "duplicates": 1, "ignored": 0}));
    let bad = track(vec![
        json!({"type": "ACTION_RULE_MATCH", "id": "m5", "ruleId": "", "at": at, "url": "ftp://x"}),
    ])
    .await
    .unwrap();
    let problem = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["events[0].ruleId", "events[0].url"]);
    let count = |rule_ids: Value| {
        let app = &app;
        let t = t.clone();
        async move {
            let body = json!({"metrics": [{"metricName": "ACTION_RULE_MATCH_COUNT", "ruleIds": rule_ids}],
                "dateFilter": {"grouping": "TODAY", "timeZone": "UTC"}});
            let report = ok_json(app.post("/rest/v1/report/rule/", &t, body).await, StatusCode::OK).await;
            report["results"]
                .as_object()
                .unwrap()
                .values()
                .map(|b| b["ACTION_RULE_MATCH_COUNT"].as_str().unwrap().parse::<i64>().unwrap())
                .sum::<i64>()
        }
    };
    assert_eq!(count(json!([checkout_id])).await, 2);
    assert_eq!(count(json!([welcome_id])).await, 1);
    assert_eq!(count(json!([checkout_id, welcome_id])).await, 3);

    // Export, then import into another workspace: created anew there, all or none.
    let export = ok_json(app.get("/rest/v1/rule/action/export", &t).await, StatusCode::OK).await;
    assert_eq!(export["rules"].as_array().unwrap().len(), 3);
    let mut portable = export.clone();
    // The other workspace has no such hours or flow: the import names them and stores nothing.
    let refused = app.post("/rest/v1/rule/action/import", &other, portable.clone()).await;
    let problem = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&problem),
        ["rules[0].conditions[3].openingHoursId", "rules[2].action.flowId"]
    );
    let none = ok_json(app.get("/rest/v1/rule/action", &other).await, StatusCode::OK).await;
    assert_eq!(none["results"], json!([]));
    portable["rules"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["name"] == "Night");
    let imported = ok_json(
        app.post("/rest/v1/rule/action/import", &other, portable).await,
        StatusCode::OK,
    )
    .await;
    let new_id = imported["rules"][0]["id"].as_str().unwrap();
    assert_ne!(new_id, night_id);
    assert_eq!(imported["rules"][0]["active"], false);
    // Back into its own workspace, a rule with its id replaces it.
    let mut own = export.clone();
    own["rules"][1]["name"] = json!("Night shift");
    ok_json(app.post("/rest/v1/rule/action/import", &t, own).await, StatusCode::OK).await;
    let list = ok_json(app.get("/rest/v1/rule/action", &t).await, StatusCode::OK).await;
    assert_eq!(list["page"]["totalElements"], 3, "{list}");
    let night = ok_json(
        app.get(&format!("/rest/v1/rule/action/{night_id}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(night["name"], "Night shift");

    // Deleted, a rule is gone from the script's copy too.
    let gone = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/rule/action/{checkout_id}"),
        &t,
        None,
    )
    .await;
    assert_eq!(gone.status(), StatusCode::NO_CONTENT);
    let compiled = app
        .request(Method::GET, "/rest/v1/widget/rules")
        .header("rapport-widget-key", &key)
        .send()
        .await
        .unwrap();
    let compiled = ok_json(compiled, StatusCode::OK).await;
    assert_eq!(compiled["rules"].as_array().unwrap().len(), 1);
    app.stop().await;
}

backend_tests!(action_rules_are_managed_compiled_answered_and_counted);
