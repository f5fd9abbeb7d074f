//! Reports end to end: known facts give known numbers (bucket edges, DST, time
//! zones, groupBy), ingestion through the widget key, CSV, and the usual 401 /
//! cross-tenant / 422 cases. Rollups against raw facts: see `rollups.rs`.

use chrono::TimeZone;
use chrono_tz::Tz;
use rapport_core::{
    backend_tests,
    model::Role,
    reports::{
        api::{DateFilter, Grouping, MetricEntry, ReportRequest, TagsFilter},
        catalogue::Report,
        facts::{RuleKind, SlaTrigger},
        query::Strategy,
    },
    testing::TestDb,
};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::utils::{expect_problem, fields, ok_json, TestApp};

fn berlin(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
    let tz: Tz = "Europe/Berlin".parse().unwrap();
    tz.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .earliest()
        .unwrap()
        .timestamp_millis()
}

fn custom(from: i64, to: i64, zone: &str) -> Value {
    json!({"grouping": "CUSTOM", "from": from, "to": to, "timeZone": zone})
}

async fn known_facts_give_known_numbers(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let ann = app.user(&tenant, "ann@alpha.test", Role::Agent, false).await;
    let bob = app.user(&tenant, "bob@alpha.test", Role::Agent, false).await;
    let s = &app.services;
    // Across midnight: 600 s on each day.
    s.record_presence_interval(
        &tenant,
        &ann,
        "ONLINE",
        berlin(2026, 11, 3, 23, 50),
        berlin(2026, 11, 4, 0, 10),
    )
    .await
    .unwrap();
    s.record_presence_interval(
        &tenant,
        &bob,
        "ONLINE",
        berlin(2026, 11, 4, 9, 0),
        berlin(2026, 11, 4, 9, 30),
    )
    .await
    .unwrap();
    // The autumn DST day is 25 hours long.
    s.record_presence_interval(
        &tenant,
        &ann,
        "LOGGED_IN",
        berlin(2026, 10, 25, 0, 0),
        berlin(2026, 10, 26, 0, 0),
    )
    .await
    .unwrap();

    // Three days: longer than 48 hours, so daily buckets.
    let range = custom(berlin(2026, 11, 3, 0, 0), berlin(2026, 11, 6, 0, 0), "Europe/Berlin");
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME"}], "dateFilter": range});
    let report = ok_json(app.post("/rest/v1/report/agent", &t, body).await, StatusCode::OK).await;
    assert_eq!(
        report,
        json!({"results": {"2026/11/03": {"ONLINE_TIME": "600"}, "2026/11/04": {"ONLINE_TIME": "2400"}, "2026/11/05": {"ONLINE_TIME": "0"}}})
    );
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME", "groupBy": "AGENT"}], "dateFilter": range});
    let report = ok_json(app.post("/rest/v1/report/agent", &t, body).await, StatusCode::OK).await;
    assert_eq!(report["results"]["2026/11/03"], json!({ann.clone(): "600"}));
    assert_eq!(
        report["results"]["2026/11/04"],
        json!({ann.clone(): "600", bob.clone(): "1800"})
    );
    // The same split keyed as the product's published example keys it.
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME", "groupBy": "AGENT_EMAIL"}], "dateFilter": range});
    let report = ok_json(app.post("/rest/v1/report/agent", &t, body).await, StatusCode::OK).await;
    assert_eq!(
        report["results"]["2026/11/04"],
        json!({"ann@alpha.test": "600", "bob@alpha.test": "1800"})
    );
    // The same instants in UTC: the split moves with the zone.
    let utc = custom(berlin(2026, 11, 3, 0, 0), berlin(2026, 11, 6, 0, 0), "UTC");
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME"}], "dateFilter": utc});
    let report = ok_json(app.post("/rest/v1/report/agent", &t, body).await, StatusCode::OK).await;
    assert_eq!(report["results"]["2026/11/03"]["ONLINE_TIME"], "1200");
    // Hourly buckets when the range is short.
    let hours = custom(berlin(2026, 11, 3, 23, 0), berlin(2026, 11, 4, 1, 0), "Europe/Berlin");
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME"}], "dateFilter": hours});
    let report = ok_json(app.post("/rest/v1/report/agent", &t, body).await, StatusCode::OK).await;
    assert_eq!(
        report,
        json!({"results": {"2026/11/03 23": {"ONLINE_TIME": "600"}, "2026/11/04 00": {"ONLINE_TIME": "600"}}})
    );
    let dst = custom(berlin(2026, 10, 24, 0, 0), berlin(2026, 10, 27, 0, 0), "Europe/Berlin");
    let body = json!({"metrics": [{"metricName": "LOGGED_IN_TIME"}], "dateFilter": dst});
    let report = ok_json(app.post("/rest/v1/report/agent", &t, body).await, StatusCode::OK).await;
    assert_eq!(report["results"]["2026/10/25"]["LOGGED_IN_TIME"], "90000");
    assert_eq!(report["results"]["2026/10/24"]["LOGGED_IN_TIME"], "0");

    // The times list: intervals clipped to the period, sum in minutes.
    let body = json!({"grouping": "CUSTOM", "from": berlin(2026, 11, 4, 0, 0), "to": berlin(2026, 11, 5, 0, 0)});
    let times = ok_json(
        app.post("/rest/v1/report/agent/times/online", &t, body).await,
        StatusCode::OK,
    )
    .await;
    let mut times = times.as_array().unwrap().clone();
    times.sort_by_key(|t| t["sumMinutes"].as_i64());
    assert_eq!(times.len(), 2);
    assert_eq!(times[0]["userId"], ann.as_str());
    assert_eq!(times[0]["sumMinutes"], 10);
    assert_eq!(times[0]["timeRanges"][0]["start"], "2026-11-03T23:00:00Z");
    assert_eq!(times[1]["sumMinutes"], 30);
    let ranged = app
        .get(
            &format!(
                "/rest/v1/report/agent/times/loggedin/range?from={}&to={}",
                berlin(2026, 10, 25, 0, 0),
                berlin(2026, 10, 26, 0, 0)
            ),
            &t,
        )
        .await;
    let ranged = ok_json(ranged, StatusCode::OK).await;
    assert_eq!(ranged[0]["sumMinutes"], 1500);

    // Rules and SLA outcomes.
    let at = berlin(2026, 11, 4, 12, 0);
    s.record_rule_match(&tenant, RuleKind::Routing, "r1", None, at)
        .await
        .unwrap();
    s.record_rule_match(&tenant, RuleKind::Routing, "r2", None, at)
        .await
        .unwrap();
    s.record_sla_outcome(&tenant, "r1", SlaTrigger::FirstResponse, None, at, true)
        .await
        .unwrap();
    s.record_sla_outcome(&tenant, "r1", SlaTrigger::FirstResponse, None, at, false)
        .await
        .unwrap();
    let body = json!({"metrics": [{"metricName": "ROUTING_RULE_MATCH_COUNT", "ruleIds": ["r1"]},
        {"metricName": "SLA_1_RULE_MATCH_COUNT"}, {"metricName": "SLA_1_RULE_MISS_COUNT"}, {"metricName": "SLA_HIT_RATE"}],
        "dateFilter": range});
    let report = ok_json(app.post("/rest/v1/report/rule/", &t, body).await, StatusCode::OK).await;
    assert_eq!(
        report["results"]["2026/11/04"],
        json!({"ROUTING_RULE_MATCH_COUNT": "1", "SLA_1_RULE_MATCH_COUNT": "2", "SLA_1_RULE_MISS_COUNT": "1", "SLA_HIT_RATE": "50"})
    );
    assert_eq!(
        report["results"]["2026/11/03"],
        json!({"ROUTING_RULE_MATCH_COUNT": "0", "SLA_1_RULE_MATCH_COUNT": "0", "SLA_1_RULE_MISS_COUNT": "0"})
    );

    // Conversations recorded as they happen: today, by hour.
    let customer = ok_json(
        app.post("/rest/v1/customer", &t, json!({"firstName": "Eve"})).await,
        StatusCode::CREATED,
    )
    .await;
    let id = customer["id"].as_str().unwrap();
    let message = json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "Hi"});
    ok_json(
        app.post("/rest/v1/message/inbound", &t, message.clone()).await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(app.post("/rest/v1/message", &t, message).await, StatusCode::CREATED).await;
    let body = json!({"metrics": [{"metricName": "CONVERSATIONS"}, {"metricName": "CONVERSATIONS_ANSWERED"}],
        "dateFilter": {"grouping": "TODAY", "timeZone": "UTC"}});
    let report = ok_json(app.post("/rest/v1/report/chat", &t, body).await, StatusCode::OK).await;
    let total = |name: &str| -> i64 {
        report["results"]
            .as_object()
            .unwrap()
            .values()
            .map(|b| b[name].as_str().unwrap().parse::<i64>().unwrap())
            .sum()
    };
    assert_eq!(total("CONVERSATIONS"), 1);
    assert_eq!(total("CONVERSATIONS_ANSWERED"), 1);
    let body =
        json!({"metrics": [{"metricName": "MESSAGES_IN", "groupBy": "TYPE"}], "dateFilter": {"grouping": "TODAY"}});
    let report = ok_json(app.post("/rest/v1/report/message", &t, body).await, StatusCode::OK).await;
    let types: Vec<&Value> = report["results"]
        .as_object()
        .unwrap()
        .values()
        .filter(|b| b["MESSAGE"] == "1")
        .collect();
    assert_eq!(types.len(), 1, "{report}");

    // CSV.
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME"}], "dateFilter": range});
    let csv = app.post("/rest/v1/report/agent?format=csv", &t, body.clone()).await;
    assert_eq!(csv.status(), StatusCode::OK);
    assert!(csv.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
    assert_eq!(
        csv.text().await.unwrap(),
        "bucket,key,value\n2026/11/03,ONLINE_TIME,600\n2026/11/04,ONLINE_TIME,2400\n2026/11/05,ONLINE_TIME,0\n"
    );

    // Another tenant sees none of it; no token, no report.
    let report = ok_json(
        app.post("/rest/v1/report/agent", &other, body.clone()).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(report["results"]["2026/11/04"]["ONLINE_TIME"], "0");
    let response = app.post("/rest/v1/report/agent", "nope", body).await;
    expect_problem(response, StatusCode::UNAUTHORIZED, "invalid_token").await;

    // Bad input names its field.
    let body =
        json!({"metrics": [{"metricName": "ONLINE_TIME", "groupBy": "AGENT"}, {"metricName": "LOGGED_IN_TIME"}]});
    let problem = expect_problem(
        app.post("/rest/v1/report/agent", &t, body).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), vec!["metrics"]);
    let body =
        json!({"metrics": [{"metricName": "VISITS"}], "dateFilter": {"grouping": "CUSTOM", "timeZone": "Mars/Base"}});
    let problem = expect_problem(
        app.post("/rest/v1/report/agent", &t, body).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), vec!["metrics[0].metricName"]);
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME"}], "dateFilter": {"grouping": "CUSTOM", "timeZone": "Mars/Base"}});
    let problem = expect_problem(
        app.post("/rest/v1/report/agent", &t, body).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), vec!["dateFilter.timeZone"]);
    let body = json!({"metrics": [{"metricName": "ONLINE_TIME"}], "dateFilter": {"grouping": "CUSTOM"}});
    let problem = expect_problem(
        app.post("/rest/v1/report/agent", &t, body).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), vec!["dateFilter.from"]);
    app.stop().await;
}

async fn visitor_script_ingestion_feeds_visit_resource_and_error_reports(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Alpha").await;
    let key = ok_json(app.get("/rest/v1/widget/key", &t).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let now = chrono::Utc::now().timestamp_millis() - 60_000;
    let batch = json!({"events": [
        {"type": "VISIT", "id": "v1", "visitorId": "alice", "url": "https://shop.test/pricing", "startedAt": now, "durationMs": 60000, "pageViews": 3, "tags": ["vip"]},
        {"type": "VISIT", "id": "v2", "visitorId": "alice", "url": "https://shop.test/", "startedAt": now, "durationMs": 30000, "pageViews": 1},
        {"type": "VISIT", "id": "v3", "visitorId": "bob", "url": "https://shop.test/pricing", "startedAt": now, "durationMs": 0, "pageViews": 1},
        {"type": "SESSION", "id": "s1", "reason": "CHAT", "startedAt": now, "endedAt": now + 1000},
        {"type": "RESOURCE", "id": "r1", "at": now, "visitId": "v1", "name": "app.js", "resourceType": "script", "url": "https://shop.test/pricing", "statusCode": 200, "durationMs": 100},
        {"type": "RESOURCE", "id": "r2", "at": now, "visitId": "v2", "name": "app.js", "resourceType": "script", "url": "https://shop.test/", "statusCode": 500, "durationMs": 300},
        {"type": "SCRIPT_ERROR", "id": "e1", "at": now, "visitorId": "alice", "url": "https://shop.test/", "message": "=HYPERLINK(\"x\")", "fileName": "app.js", "line": 3, "stack": "Error: x\n    at go (https://shop.test/app.js:3:7)\n"}
    ]});
    let post = |body: Value, key: Option<&str>| {
        let mut req = app.request(reqwest::Method::POST, "/rest/v1/widget/track").json(&body);
        if let Some(key) = key {
            req = req.header("rapport-widget-key", key);
        }
        req.send()
    };
    let result = ok_json(post(batch.clone(), Some(&key)).await.unwrap(), StatusCode::ACCEPTED).await;
    assert_eq!(result, json!({"accepted": 7, "duplicates": 0, "ignored": 0}));
    let result = ok_json(post(batch, Some(&key)).await.unwrap(), StatusCode::ACCEPTED).await;
    assert_eq!(
        result,
        json!({"accepted": 0, "duplicates": 7, "ignored": 0}),
        "a retried batch is recorded once"
    );
    let response = post(json!({"events": []}), None).await.unwrap();
    expect_problem(response, StatusCode::UNAUTHORIZED, "missing_widget_key").await;
    let bad = json!({"events": [{"type": "VISIT", "id": "v9", "visitorId": "x", "url": "ftp://x", "startedAt": now, "durationMs": 1, "pageViews": 1}]});
    let problem = expect_problem(
        post(bad, Some(&key)).await.unwrap(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&problem), vec!["events[0].url"]);

    let sum = |report: &Value, name: &str| -> i64 {
        report["results"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|b| b[name].as_str())
            .map(|v| v.parse::<i64>().unwrap())
            .sum()
    };
    let body = json!({"metrics": [{"metricName": "VISITS"}, {"metricName": "UNIQUE_VISITORS"}, {"metricName": "PAGE_VIEWS"}],
        "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(app.post("/rest/v1/report/visit", &t, body).await, StatusCode::OK).await;
    assert_eq!(
        (
            sum(&report, "VISITS"),
            sum(&report, "UNIQUE_VISITORS"),
            sum(&report, "PAGE_VIEWS")
        ),
        (3, 2, 5)
    );
    // The dashboards' period totals: unique visitors once over the period, a
    // filter applied to the count, nothing in the week before.
    let entry = |name: &str, tags: Option<&str>| MetricEntry {
        metric_name: name.to_string(),
        tags: tags.map(|tag| TagsFilter {
            all: vec![tag.to_string()],
            ..Default::default()
        }),
        ..Default::default()
    };
    let request = ReportRequest {
        metrics: vec![
            entry("VISITS", None),
            entry("UNIQUE_VISITORS", None),
            entry("PAGE_VIEWS", None),
            entry("UNIQUE_VISITORS", Some("vip")),
        ],
        date_filter: DateFilter {
            grouping: Grouping::Last7Days,
            ..Default::default()
        },
    };
    for strategy in [Strategy::Rollups, Strategy::Raw] {
        let totals = app
            .services
            .report_totals(&tenant, Report::Visit, &request, strategy)
            .await
            .unwrap();
        let current: Vec<_> = totals.iter().map(|t| t.current.as_deref().unwrap()).collect();
        assert_eq!(current, ["3", "2", "5", "1"], "{strategy:?}");
        let previous: Vec<_> = totals.iter().map(|t| t.previous.as_deref().unwrap()).collect();
        assert_eq!(previous, ["0", "0", "0", "0"], "{strategy:?}");
    }
    let body =
        json!({"metrics": [{"metricName": "VISITS", "tags": ["vip"]}], "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(app.post("/rest/v1/report/visit", &t, body).await, StatusCode::OK).await;
    assert_eq!(sum(&report, "VISITS"), 1);
    let body = json!({"metrics": [{"metricName": "VISITS"}], "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(app.post("/rest/v1/report/visit/pages", &t, body).await, StatusCode::OK).await;
    assert_eq!(sum(&report, "/pricing"), 2);
    let body = json!({"metrics": [{"metricName": "SESSIONS"}], "dateFilter": {"grouping": "TODAY"}});
    let report = ok_json(
        app.post("/rest/v1/report/session/reason", &t, body).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(sum(&report, "CHAT"), 1);

    let body = json!({"groupBy": "RESOURCE_NAME", "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(app.post("/rest/v1/report/resources", &t, body).await, StatusCode::OK).await;
    assert_eq!(report["rows"][0]["count"], 2);
    assert_eq!(report["rows"][0]["avgDurationMs"], 200.0);
    assert_eq!(report["rows"][0]["errorCount"], 1);
    let body = json!({"criteria": {"key": "durationMs", "criteriaObject": {"gt": 150}}, "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(app.post("/rest/v1/report/resources", &t, body).await, StatusCode::OK).await;
    assert_eq!(report["rows"][0]["count"], 1);
    assert_eq!(sum(&report, "RESOURCE_LOADS"), 1);

    let body = json!({"fileName": "app.js", "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(
        app.post("/rest/v1/report/scripterrors", &t, body.clone()).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(report["errors"][0]["count"], 1);
    assert_eq!(
        report["errors"][0]["stack"], "Error: x\n    at go (https://shop.test/app.js:3:7)",
        "the stack is kept, without its trailing newline"
    );
    assert_eq!(sum(&report, "AFFECTED_VISITORS"), 1);
    let csv = app
        .post("/rest/v1/report/scripterrors?format=csv", &t, body)
        .await
        .text()
        .await
        .unwrap();
    assert!(csv.contains("\"'=HYPERLINK(\"\"x\"\")\""), "formula neutralised: {csv}");
    app.stop().await;
}

async fn tracking_is_rate_limited_per_tenant(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.track_events_per_minute = 5).await;
    let mut keys = Vec::new();
    for name in ["Alpha", "Beta"] {
        let (_, t) = app.tenant_with_key(name).await;
        let key = ok_json(app.get("/rest/v1/widget/key", &t).await, StatusCode::OK).await["widgetKey"]
            .as_str()
            .unwrap()
            .to_string();
        keys.push((t, key));
    }
    let now = chrono::Utc::now().timestamp_millis() - 60_000;
    let batch = |ids: &[&str]| {
        let events: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "VISIT", "id": id, "visitorId": "v", "url": "https://shop.test/", "startedAt": now, "durationMs": 1000, "pageViews": 1}))
            .collect();
        json!({ "events": events })
    };
    let post = |body: Value, key: &str| {
        app.request(reqwest::Method::POST, "/rest/v1/widget/track")
            .header("rapport-widget-key", key)
            .json(&body)
            .send()
    };
    let (alpha, alpha_key) = &keys[0];
    let accepted = ok_json(
        post(batch(&["a", "b", "c"]), alpha_key).await.unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(accepted["accepted"], 3);
    let refused = post(batch(&["d", "e", "f"]), alpha_key).await.unwrap();
    assert!(refused.headers().contains_key("retry-after"));
    expect_problem(refused, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // Another tenant has its own allowance.
    let accepted = ok_json(
        post(batch(&["x", "y", "z"]), &keys[1].1).await.unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(accepted["accepted"], 3);
    // The refused batch left nothing behind.
    let body = json!({"metrics": [{"metricName": "VISITS"}], "dateFilter": {"grouping": "LAST_7_DAYS"}});
    let report = ok_json(app.post("/rest/v1/report/visit", alpha, body).await, StatusCode::OK).await;
    let visits: i64 = report["results"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|b| b["VISITS"].as_str())
        .map(|v| v.parse::<i64>().unwrap())
        .sum();
    assert_eq!(visits, 3);
}

backend_tests!(
    known_facts_give_known_numbers,
    visitor_script_ingestion_feeds_visit_resource_and_error_reports,
    tracking_is_rate_limited_per_tenant
);
