//! Erasure: a customer who did everything (chatted, sent a file, was recorded,
//! visited pages, hit a script error, asked for a call that was recorded,
//! co-browsed, had a transcript mailed, was noted and routed) is deleted, and
//! then every row of every table is read back as text for any trace of them.

use rapport_core::{
    appointments::recordings::{NewConferenceRecording, RecordingSource},
    audit::{Actor, ActorKind},
    backend_tests,
    db::Db,
    model::Role,
    testing::TestDb,
};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use crate::{
    dashboard::{server_fn_ok, session},
    utils::{expect_problem, ok_json, send, TestApp},
};

/// Every row of every table, as text: `(table, row)`. Blobs are written in
/// hex, so a file's bytes are found too. SQLite's FTS5 index segments are left
/// out: they keep a deleted document's words until the index is next merged
/// (the documented limit), while its rows are checked through `search_docs`.
async fn every_row(db: &Db) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    match db {
        Db::Sqlite(pools) => {
            let tables: Vec<String> = sqlx::query_scalar(
                "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' \
                 and name not like '_sqlx%' and name not like 'search_index%'",
            )
            .fetch_all(&pools.reads)
            .await
            .unwrap();
            for table in tables {
                let columns: Vec<String> =
                    sqlx::query_scalar(&format!("select name from pragma_table_info('{table}')"))
                        .fetch_all(&pools.reads)
                        .await
                        .unwrap();
                let text: Vec<String> = columns
                    .iter()
                    .map(|c| format!("coalesce(case when typeof(\"{c}\") = 'blob' then hex(\"{c}\") else cast(\"{c}\" as text) end, '')"))
                    .collect();
                let sql = format!("select {} from \"{table}\"", text.join(" || '|' || "));
                for row in sqlx::query_scalar::<_, String>(&sql)
                    .fetch_all(&pools.reads)
                    .await
                    .unwrap()
                {
                    rows.push((table.clone(), row));
                }
            }
        }
        Db::Postgres(pool) => {
            let tables: Vec<String> = sqlx::query_scalar(
                "select table_name::text from information_schema.tables where table_schema = current_schema() \
                 and table_type = 'BASE TABLE' and table_name not like '_sqlx%'",
            )
            .fetch_all(pool)
            .await
            .unwrap();
            for table in tables {
                let sql = format!("select t::text from \"{table}\" t");
                for row in sqlx::query_scalar::<_, String>(&sql).fetch_all(pool).await.unwrap() {
                    rows.push((table.clone(), row));
                }
            }
        }
    }
    rows
}

/// Where `needles` appear in `rows`: `(table, needle)`, each once.
fn traces(rows: &[(String, String)], needles: &[String]) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    for (table, row) in rows {
        let lower = row.to_lowercase();
        for needle in needles {
            let hex: String = needle.bytes().map(|b| format!("{b:02x}")).collect();
            if (lower.contains(&needle.to_lowercase()) || lower.contains(&hex))
                && !found.contains(&(table.clone(), needle.clone()))
            {
                found.push((table.clone(), needle.clone()));
            }
        }
    }
    found.sort();
    found
}

async fn an_erased_customer_leaves_no_trace(db: TestDb) {
    let app = TestApp::start_with(db, |c| c.webhooks.worker = false).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let agent_id = app.named_agent(&alpha, "sam@alpha.example", "Sam Smith").await;
    app.user(&alpha, "kim@alpha.example", Role::Agent, false).await;
    app.user(&alpha, "boss@alpha.example", Role::Admin, false).await;
    let agent = session(&app, "sam@alpha.example").await;
    ok_json(
        app.post("/rest/v1/webhook", &key, json!({"url": "https://example.com/hook"}))
            .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        app.post(
            "/rest/v1/rule/routing",
            &key,
            json!({"name": "All to Sam", "types": ["CHAT"], "actions": [{"type": "QUEUE", "target": {"type": "USER", "value": agent_id}}]}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let widget_key = app.widget_key(&key).await;
    let widget = |method: Method, path: &str, token: &str| {
        app.request(method, path)
            .header("rapport-widget-key", &widget_key)
            .bearer_auth(token.to_string())
    };

    // Zelda does everything.
    let (customer, visitor_token) = app.widget_visitor(&widget_key, "Zelda").await;
    let profile = widget(Method::POST, "/rest/v1/widget/profile", &visitor_token)
        .json(&json!({"firstName": "Zeldaunique", "email": "zelda.unique@example.com"}))
        .send()
        .await
        .unwrap();
    assert!(profile.status().is_success(), "{}", profile.text().await.unwrap());
    let said = widget(Method::POST, "/rest/v1/widget/message", &visitor_token)
        .json(&json!({"message": "my secret chat line"}))
        .send()
        .await
        .unwrap();
    ok_json(said, StatusCode::CREATED).await;
    let file = widget(Method::POST, "/rest/v1/widget/file", &visitor_token)
        .query(&[("name", "zelda-passport.pdf")])
        .header(header::CONTENT_TYPE, "application/pdf")
        .body(&b"%PDF zelda file bytes"[..])
        .send()
        .await
        .unwrap();
    ok_json(file, StatusCode::CREATED).await;
    let reply =
        json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": "agent answer for zelda"});
    ok_json(app.post("/rest/v1/message", &key, reply).await, StatusCode::CREATED).await;
    server_fn_ok(
        &app,
        "inbox_note",
        &agent,
        &[("customer_id", &customer), ("text", "zelda private note @kim")],
    )
    .await;
    let transcript = widget(Method::POST, "/rest/v1/widget/transcript", &visitor_token)
        .json(&json!({"email": "zelda.transcript@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(transcript.status(), StatusCode::ACCEPTED);
    // Recorded, with a visit, a page resource and a script error of her visitor.
    let started = widget(Method::POST, "/rest/v1/widget/recording", &visitor_token)
        .json(&json!({"visitorId": "zelda-visitor", "url": "https://shop.example/pricing?ref=zelda-page"}))
        .send()
        .await
        .unwrap();
    let started = ok_json(started, StatusCode::CREATED).await;
    let session_id = started["sessionId"].as_str().unwrap().to_string();
    let now = chrono::Utc::now().timestamp_millis() - 60_000;
    let events = json!({"seq": 0, "events": [{"type": 4, "timestamp": now, "data": {"href": "https://shop.example/pricing?ref=zelda-page", "width": 800, "height": 600}}]});
    let batch = app
        .request(Method::POST, &format!("/rest/v1/widget/recording/{session_id}/events"))
        .header("rapport-widget-key", &widget_key)
        .bearer_auth(started["writeToken"].as_str().unwrap())
        .json(&events)
        .send()
        .await
        .unwrap();
    assert!(batch.status().is_success(), "{}", batch.text().await.unwrap());
    let tracked = app
        .request(Method::POST, "/rest/v1/widget/track")
        .header("rapport-widget-key", &widget_key)
        .json(&json!({"events": [
            {"type": "VISIT", "id": "zelda-visit", "visitorId": "zelda-visitor", "url": "https://shop.example/pricing?ref=zelda-page", "startedAt": now, "durationMs": 1000, "pageViews": 1},
            {"type": "RESOURCE", "id": "zelda-res", "at": now, "visitId": "zelda-visit", "visitorId": "zelda-visitor", "name": "app.js", "resourceType": "script", "url": "https://shop.example/pricing?ref=zelda-page", "statusCode": 200, "durationMs": 10},
            {"type": "SCRIPT_ERROR", "id": "zelda-err", "at": now, "visitorId": "zelda-visitor", "url": "https://shop.example/pricing?ref=zelda-page", "message": "zelda exploded"}
        ]}))
        .send()
        .await
        .unwrap();
    ok_json(tracked, StatusCode::ACCEPTED).await;
    // A co-browse of that session, by Sam.
    let sam = Actor {
        kind: ActorKind::User,
        id: agent_id.to_string(),
        ip: None,
        request_id: None,
    };
    app.services
        .request_script_cobrowse(&alpha, &session_id, &sam)
        .await
        .unwrap();
    // A call she asked for, recorded.
    let call = widget(Method::POST, "/rest/v1/widget/call", &visitor_token)
        .send()
        .await
        .unwrap();
    ok_json(call, StatusCode::CREATED).await;
    let calls = ok_json(app.get("/rest/v1/appointment?pageSize=50", &key).await, StatusCode::OK).await;
    let appointment = calls["results"][0]["id"].as_str().unwrap().to_string();
    let recording = NewConferenceRecording {
        appointment_id: appointment.clone().into(),
        participant: "Zeldaunique".into(),
        source: RecordingSource::Camera,
        started_at: now,
        ended_at: now + 1000,
        host: None,
    };
    app.services
        .store_conference_recording(&alpha, &recording, &b"zelda call video"[..])
        .await
        .unwrap();

    let needles: Vec<String> = [
        customer.as_str(),
        "Zeldaunique",
        "zelda.unique@example.com",
        "zelda.transcript@example.com",
        "my secret chat line",
        "agent answer for zelda",
        "zelda private note",
        "zelda-passport",
        "zelda file bytes",
        "zelda-visitor",
        "zelda-page",
        "zelda exploded",
        "zelda call video",
        "zelda-visit",
        "zelda-res",
        "zelda-err",
        session_id.as_str(),
        appointment.as_str(),
    ]
    .map(String::from)
    .to_vec();
    // Her data, exported first: over REST, and by an admin from the inbox.
    let export = app.get(&format!("/rest/v1/customer/{customer}/export"), &key).await;
    assert_eq!(
        export.headers()[header::CONTENT_DISPOSITION],
        format!("attachment; filename=\"customer-{customer}.json\"").as_str()
    );
    let export = ok_json(export, StatusCode::OK).await;
    assert_eq!(export["customer"]["firstName"], "Zeldaunique");
    let records = &export["records"];
    let texts: Vec<&str> = records["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["message"].as_str())
        .collect();
    assert!(
        texts.contains(&"my secret chat line") && texts.contains(&"agent answer for zelda"),
        "{texts:?}"
    );
    assert_eq!(records["notes"][0]["body"], "zelda private note @kim");
    use base64::Engine as _;
    let file = base64::engine::general_purpose::STANDARD
        .decode(records["chat_files"][0]["data"].as_str().unwrap())
        .unwrap();
    assert_eq!(file, b"%PDF zelda file bytes");
    for table in [
        "recorded_sessions",
        "visits",
        "visit_resources",
        "script_errors",
        "appointments",
        "conference_recordings",
        "routing_decisions",
        "mail_outbox",
    ] {
        assert!(
            !records[table].as_array().unwrap().is_empty(),
            "{table} in the export: {records}"
        );
    }
    assert_eq!(records["script_errors"][0]["message"], "zelda exploded");
    assert!(
        records["mail_outbox"][0].get("body").is_none(),
        "sealed bodies stay out"
    );
    let admin = session(&app, "boss@alpha.example").await;
    let download = app
        .request(Method::GET, &format!("/inbox/{customer}/export"))
        .header(header::COOKIE, &admin)
        .send()
        .await
        .unwrap();
    assert_eq!(download.status(), StatusCode::OK);
    let downloaded: serde_json::Value = download.json().await.unwrap();
    assert_eq!(downloaded["records"]["notes"], records["notes"]);
    let refused = app
        .request(Method::GET, &format!("/inbox/{customer}/export"))
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let audit = ok_json(
        app.get("/rest/v1/audit?action=customer.export", &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["page"]["totalElements"], 2);

    // Everything is there before.
    let before = traces(&every_row(app.services.db()).await, &needles);
    let tables: Vec<&str> = before.iter().map(|(t, _)| t.as_str()).collect();
    for table in [
        "messages",
        "notes",
        "chat_files",
        "recorded_sessions",
        "visits",
        "script_errors",
        "appointments",
        "mail_outbox",
        "events",
        "report_facts",
    ] {
        assert!(tables.contains(&table), "{table} holds her before: {before:?}");
    }

    // Erased: what is left of her is her id where deletions are recorded.
    let erased = send(
        &app,
        Method::DELETE,
        &format!("/rest/v1/customer/{customer}"),
        &key,
        None,
    )
    .await;
    assert_eq!(erased.status(), StatusCode::NO_CONTENT);
    let after = traces(&every_row(app.services.db()).await, &needles);
    // The audit log keeps the ids of what was done (no data), and the
    // `customer.deleted` event her id.
    let allowed = |(table, needle): &(String, String)| match table.as_str() {
        "audit_log" => [&customer, &session_id, &appointment].contains(&needle),
        "events" | "webhook_deliveries" => *needle == customer,
        _ => false,
    };
    let left: Vec<&(String, String)> = after.iter().filter(|t| !allowed(t)).collect();
    assert!(left.is_empty(), "traces left: {left:?}");
    // What is left says nothing of her: the erasure's audit entry, and the
    // `customer.deleted` event with her id alone.
    let audit = ok_json(
        app.get("/rest/v1/audit?action=customer.erase", &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["results"][0]["resourceId"], customer.as_str());
    let hooks = ok_json(app.get("/rest/v1/webhook", &key).await, StatusCode::OK).await;
    let hook = hooks["results"][0]["id"].as_str().unwrap();
    // Deliveries are written after the commit by the worker's fan-out; the
    // worker is off here, so the test does its step.
    app.services.fan_out_events().await.unwrap();
    let deliveries = ok_json(
        app.get(&format!("/rest/v1/webhook/{hook}/delivery?pageSize=100"), &key)
            .await,
        StatusCode::OK,
    )
    .await;
    let types: Vec<&str> = deliveries["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["eventType"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["customer.deleted"], "the events about her went with her");
    // Reports keep their numbers.
    let report = json!({"metrics": [{"metricName": "MESSAGES"}], "dateFilter": {"grouping": "TODAY"}});
    let report = ok_json(app.post("/rest/v1/report/message", &key, report).await, StatusCode::OK).await;
    let total: i64 = report["results"]
        .as_object()
        .unwrap()
        .values()
        .map(|b| b["MESSAGES"].as_str().unwrap().parse::<i64>().unwrap())
        .sum();
    assert!(total >= 3, "{report}");
    // She is gone, and so are her session's and call's pages.
    expect_problem(
        app.get(&format!("/rest/v1/customer/{customer}"), &key).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_problem(
        app.get(&format!("/rest/v1/session/{session_id}"), &key).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_problem(
        app.get(&format!("/rest/v1/appointment/{appointment}"), &key).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}

backend_tests!(an_erased_customer_leaves_no_trace);

async fn a_recorded_session_is_deleted_on_its_own(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, key) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let now = chrono::Utc::now();
    let recorded = app
        .post(
            "/rest/v1/session",
            &key,
            json!({"id": "s-delete", "visitorId": "v-1", "startedAt": now.to_rfc3339()}),
        )
        .await;
    ok_json(recorded, StatusCode::OK).await;
    let path = "/rest/v1/session/s-delete";
    expect_problem(
        send(&app, Method::DELETE, path, &other, None).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    assert_eq!(
        send(&app, Method::DELETE, path, &key, None).await.status(),
        StatusCode::NO_CONTENT
    );
    expect_problem(app.get(path, &key).await, StatusCode::NOT_FOUND, "not_found").await;
    expect_problem(
        send(&app, Method::DELETE, path, &key, None).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let audit = ok_json(
        app.get("/rest/v1/audit?action=session.delete", &key).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(audit["page"]["totalElements"], 1);
}

backend_tests!(a_recorded_session_is_deleted_on_its_own);
