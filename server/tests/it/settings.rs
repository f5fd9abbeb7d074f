//! Settings objects over REST: opening hours, system messages, watchdogs, routing and SLA rules.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::utils::{expect_problem, fields, ok_json, send, TestApp};

async fn opening_hours_and_system_messages(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;

    let bad = app
        .post(
            "/rest/v1/openinghours",
            &t,
            json!({
                "timezone": "Moon/Base",
                "timezoneOffset": 2000,
                "conditions": [
                    {"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 17, "minute": 0}},
                    {"type": "WEEKDAY", "weekday": "SATURDAY", "startHours": {"hour": 24, "minute": 0}, "endHours": {"hour": 10, "minute": 60}},
                    {"type": "WEEKDAY", "weekday": "SUNDAY", "startHours": {"hour": 12, "minute": 0}, "endHours": {"hour": 11, "minute": 0}}
                ],
                "holidays": [
                    {"name": "Both forms: the calendar date names the day", "fromDate": "2026-12-24T00:00:00Z", "from": {"year": 2026, "month": 12, "day": 25}},
                    {"name": "Backwards", "from": {"year": 2026, "month": 12, "day": 31}, "to": {"year": 2026, "month": 12, "day": 30}},
                    {"name": "No date", "countryCode": "Germany"},
                    {"from": {"year": 2026, "month": 2, "day": 30}}
                ]
            }),
        )
        .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&p),
        [
            "timezoneOffset",
            "timezone",
            "conditions[1].startHours.hour",
            "conditions[1].endHours.minute",
            "conditions[1].endHours",
            "conditions[2].endHours",
            "holidays[1].to",
            "holidays[2].fromDate",
            "holidays[2].countryCode",
            "holidays[3].from"
        ]
    );
    let wrong_type = app
        .post("/rest/v1/openinghours", &t, json!({"conditions": [{"type": "WEEKDAY", "weekday": "EVERYDAY", "startHours": {"hour": "nine", "minute": 0}, "endHours": {"hour": 17, "minute": 0}}]}))
        .await;
    let p = expect_problem(wrong_type, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["conditions[0].startHours.hour"]);
    assert_eq!(p["errors"][0]["code"], "invalid_type");

    let hours = ok_json(
        app.post(
            "/rest/v1/openinghours",
            &t,
            json!({
                "timezone": "Europe/Berlin",
                "conditions": [
                    {"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 12, "minute": 30}},
                    {"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 13, "minute": 30}, "endHours": {"hour": 18, "minute": 0}}
                ],
                "holidays": [{"name": "Christmas", "from": {"year": 2026, "month": 12, "day": 24}, "to": {"year": 2026, "month": 12, "day": 26}, "countryCode": "DE", "fixedDate": true}]
            }),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(hours["name"], "Opening hours", "a default name");
    assert!(hours["createdAt"].is_string());
    let hours_id = hours["id"].as_str().unwrap().to_string();

    let bad_msg = app
        .post(
            "/rest/v1/systemmessage",
            &t,
            json!({"message": "Hi", "language": "not a tag!"}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad_msg, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["language"]
    );
    let msg = ok_json(
        app.post(
            "/rest/v1/systemmessage",
            &t,
            json!({"message": "Alle beschäftigt", "language": "de-CH"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let msg_id = msg["id"].as_str().unwrap().to_string();
    let over = ok_json(
        app.post(
            "/rest/v1/systemmessage",
            &t,
            json!({"id": msg_id, "message": "Gleich da", "language": "de"}),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(over["message"], "Gleich da");
    let put = ok_json(
        send(
            &app,
            Method::PUT,
            &format!("/rest/v1/systemmessage/{msg_id}"),
            &t,
            Some(json!({"message": "Moment", "language": "de"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(put["id"], msg_id.as_str());

    // A rule uses both; neither can be deleted until the rule is gone.
    let rule = ok_json(
        app.post(
            "/rest/v1/rule/routing",
            &t,
            json!({"name": "After hours", "types": ["CHAT"],
                   "conditions": [{"type": "OPENING_HOUR", "openingHoursId": hours_id, "inside": false}],
                   "actions": [{"type": "SYSTEM_MESSAGE", "systemMessageId": msg_id}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let del = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/openinghours/{hours_id}"),
        &t,
        None,
    )
    .await;
    expect_problem(del, StatusCode::CONFLICT, "in_use").await;
    let del = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/systemmessage/{msg_id}"),
        &t,
        None,
    )
    .await;
    expect_problem(del, StatusCode::CONFLICT, "in_use").await;
    let rule_id = rule["id"].as_str().unwrap();
    assert_eq!(
        send(
            &app,
            Method::DELETE,
            &format!("/rest/v1/rule/routing/{rule_id}"),
            &t,
            None
        )
        .await
        .status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        send(
            &app,
            Method::DELETE,
            &format!("/rest/v1/openinghours/{hours_id}"),
            &t,
            None
        )
        .await
        .status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        send(
            &app,
            Method::DELETE,
            &format!("/rest/v1/systemmessage/{msg_id}"),
            &t,
            None
        )
        .await
        .status(),
        StatusCode::NO_CONTENT
    );
}

async fn rules_and_watchdogs(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let foreign_hours = ok_json(
        app.post("/rest/v1/openinghours", &other, json!({"name": "Beta hours"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    let agent = ok_json(
        app.post("/rest/v1/user", &t, json!({"email": "agent@alpha.test"}))
            .await,
        StatusCode::CREATED,
    )
    .await;

    let bad = app
        .post(
            "/rest/v1/rule/routing",
            &t,
            json!({
                "name": "Broken", "types": ["CHAT", "CHAT"],
                "conditions": [{"type": "OPENING_HOUR", "openingHoursId": foreign_hours["id"]}, {"type": "NO_ANSWER", "seconds": 0}],
                "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": "ghost"}, "maxWaitSeconds": 9000}],
                "elseRules": [{"name": "", "types": ["CALL"], "actions": []}]
            }),
        )
        .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&p),
        [
            "types[1]",
            "conditions[1].seconds",
            "actions[0].maxWaitSeconds",
            "elseRules[0].name",
            "elseRules[0].actions",
            "conditions[0].openingHoursId",
            "actions[0].target.value"
        ]
    );
    let unknown_kind = app
        .post(
            "/rest/v1/rule/routing",
            &t,
            json!({"name": "x", "types": ["CHAT"], "actions": [{"type": "TELEPORT"}]}),
        )
        .await;
    let p = expect_problem(unknown_kind, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(p["errors"][0]["field"], "actions[0].type");
    assert!(p["errors"][0]["message"].as_str().unwrap().contains("ROUTING_TO"));

    let queue = json!({"type": "QUEUE", "target": {"type": "USER", "value": agent["id"]}, "agentState": "ONLINE"});
    let welcome = ok_json(
        app.post(
            "/rest/v1/flow",
            &t,
            json!({"name": "Welcome", "messages": [{"type": "MESSAGE", "message": "Hello"}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let a = ok_json(
        app.post(
            "/rest/v1/rule/routing",
            &t,
            json!({"name": "A", "types": ["CHAT"], "conditions": [{"type": "URL", "urls": ["https://shop.test/*"]}],
                   "actions": [queue],
                   "elseRules": [{"name": "A else", "types": ["CHAT"], "actions": [{"type": "SEND_FLOW", "flowId": welcome["id"]}],
                                  "elseRules": [{"name": "A else else", "types": ["CHAT"], "actions": [{"type": "QUEUE", "target": {"type": "TAG", "value": "de"}}]}]}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(a["active"], true);
    assert_eq!(a["elseRules"][0]["elseRules"][0]["actions"][0]["agentState"], "ANY");
    let a_id = a["id"].as_str().unwrap().to_string();
    let b = ok_json(
        app.post(
            "/rest/v1/rule/routing",
            &t,
            json!({"name": "B", "types": ["CALL"], "actions": [{"type": "ROUTING_TO", "ruleId": a_id}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let b_id = b["id"].as_str().unwrap().to_string();
    // A → B would close the circle A → B → A.
    let cycle = app
        .post(
            "/rest/v1/rule/routing",
            &t,
            json!({"id": a_id, "name": "A", "types": ["CHAT"], "actions": [{"type": "ROUTING_TO", "ruleId": b_id}]}),
        )
        .await;
    let p = expect_problem(cycle, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(p["errors"][0]["code"], "routing_cycle");
    let self_loop = app
        .post(
            "/rest/v1/rule/routing",
            &t,
            json!({"id": b_id, "name": "B", "types": ["CALL"], "actions": [{"type": "ROUTING_TO", "ruleId": b_id}]}),
        )
        .await;
    expect_problem(self_loop, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    let in_use = send(&app, Method::DELETE, &format!("/rest/v1/rule/routing/{a_id}"), &t, None).await;
    expect_problem(in_use, StatusCode::CONFLICT, "in_use").await;
    let listed = ok_json(app.get("/rest/v1/rule/routing?pageSize=1", &t).await, StatusCode::OK).await;
    assert_eq!(listed["page"]["totalElements"], 2);
    assert_eq!(listed["results"].as_array().unwrap().len(), 1);
    expect_problem(
        app.get(&format!("/rest/v1/rule/routing/{a_id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // SLA rules: positive triggers, valid receivers.
    let bad_sla = app
        .post(
            "/rest/v1/rule/sla",
            &t,
            json!({"name": "VIP", "trigger": {"firstResponseSeconds": 0, "secondResponseSeconds": 60},
                   "receivers": [{"type": "EMAIL", "value": "nope"}, {"type": "WEBHOOK", "value": "ftp://x"}, {"type": "USER", "value": "ghost"}]}),
        )
        .await;
    let p = expect_problem(bad_sla, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(
        fields(&p),
        [
            "trigger.firstResponseSeconds",
            "receivers[0].value",
            "receivers[1].value",
            "receivers[2].value"
        ]
    );
    let no_trigger = app.post("/rest/v1/rule/sla", &t, json!({"name": "x"})).await;
    assert_eq!(
        fields(&expect_problem(no_trigger, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["trigger"]
    );
    let sla = ok_json(
        app.post(
            "/rest/v1/rule/sla",
            &t,
            json!({"name": "VIP", "conditions": [{"type": "HAS_TAG", "tags": ["vip"]}],
                   "trigger": {"firstResponseSeconds": 60, "secondResponseSeconds": 300},
                   "receivers": [{"type": "USER", "value": agent["id"]}, {"type": "EMAIL", "value": "lead@alpha.test"}], "watchdogEnabled": true}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(sla["trigger"]["secondResponseSeconds"], 300);

    // Watchdogs.
    let bad_dog = app
        .post(
            "/rest/v1/watchdog",
            &t,
            json!({"name": "Errors", "watchdogType": "EVERYTHING"}),
        )
        .await;
    let p = expect_problem(bad_dog, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert!(p["errors"][0]["message"].as_str().unwrap().contains("JAVASCRIPT_ERROR"));
    let dup = app
        .post(
            "/rest/v1/watchdog",
            &t,
            json!({"name": "Errors", "watchdogType": "JAVASCRIPT_ERROR",
            "receivers": [{"type": "EMAIL", "value": "ops@alpha.test"}, {"type": "EMAIL", "value": "ops@alpha.test"}]}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(dup, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["receivers[1]"]
    );
    let dog = ok_json(
        app.post(
            "/rest/v1/watchdog",
            &t,
            json!({"name": "Errors", "watchdogType": "JAVASCRIPT_ERROR",
            "receivers": [{"type": "WEBHOOK", "value": "https://hooks.alpha.test/js"}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let dog_id = dog["id"].as_str().unwrap();
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/watchdog/{dog_id}"), &t, None)
            .await
            .status(),
        StatusCode::NO_CONTENT
    );
}

backend_tests!(opening_hours_and_system_messages, rules_and_watchdogs);
