//! Full-text search over REST and from the inbox: message text and customers,
//! ranked and paged with the matched passage, filtered by status, agent, tag
//! and date, kept in step with every write, and never across tenants.

use rapport_core::{backend_tests, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{server_fn_ok, session},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

async fn customer(app: &TestApp, key: &str, body: Value) -> String {
    let created = ok_json(app.post("/rest/v1/customer", key, body).await, StatusCode::CREATED).await;
    created["id"].as_str().unwrap().to_string()
}

async fn inbound(app: &TestApp, key: &str, customer: &str, text: &str) {
    let body = json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": text});
    ok_json(
        app.post("/rest/v1/message/inbound", key, body).await,
        StatusCode::CREATED,
    )
    .await;
}

async fn search(app: &TestApp, key: &str, query: &str) -> Value {
    ok_json(app.get(&format!("/rest/v1/search?{query}"), key).await, StatusCode::OK).await
}

/// The customers of the hits, in order.
fn customers_of(found: &Value) -> Vec<String> {
    found["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["customerId"].as_str().unwrap().to_string())
        .collect()
}

async fn search_finds_words_in_messages_and_customers(db: TestDb) {
    let app = TestApp::start(db).await;
    let (alpha, key) = app.tenant_with_key("Alpha").await;
    let (_, beta_key) = app.tenant_with_key("Beta").await;
    let agent = app.user(&alpha, "agent@alpha.example", Role::Agent, false).await;

    let eva = customer(
        &app,
        &key,
        json!({"firstName": "Eva", "lastName": "Müller", "email": "eva@shop.example", "tags": ["vip"]}),
    )
    .await;
    let oskar = customer(&app, &key, json!({"firstName": "Oskar"})).await;
    inbound(&app, &key, &eva, "Where is my refund for order 1182?").await;
    let reply = json!({"customerId": eva, "isExternalId": false, "type": "MESSAGE", "message": "The refund for your order was issued today."});
    ok_json(app.post("/rest/v1/message", &key, reply).await, StatusCode::CREATED).await;
    inbound(&app, &key, &oskar, "Order 2044 arrived broken").await;
    let stranger = customer(&app, &beta_key, json!({"firstName": "Eva"})).await;
    inbound(&app, &beta_key, &stranger, "refund for order 1182 please").await;

    // Words match the start of words, all of them, in both directions of the chat.
    let found = search(&app, &key, "q=refund").await;
    assert_eq!(found["page"]["totalElements"], 2, "{found}");
    assert_eq!(customers_of(&found), [eva.as_str(), eva.as_str()]);
    let hit = &found["results"][0];
    assert_eq!(hit["kind"], "MESSAGE");
    assert_eq!(hit["customerName"], "Eva Müller");
    assert_eq!(hit["status"], "UNRESOLVED");
    let snippet: Vec<char> = hit["snippet"].as_str().unwrap().chars().collect();
    let [start, end] = [
        hit["highlights"][0][0].as_u64().unwrap() as usize,
        hit["highlights"][0][1].as_u64().unwrap() as usize,
    ];
    assert_eq!(
        snippet[start..end].iter().collect::<String>().to_lowercase(),
        "refund",
        "{hit}"
    );
    assert_eq!(
        customers_of(&search(&app, &key, "q=order%201182").await),
        [eva.as_str()]
    );
    assert_eq!(search(&app, &key, "q=ord").await["page"]["totalElements"], 3);
    let by_name = search(&app, &key, "q=eva%20m%C3%BCller").await;
    assert_eq!(by_name["results"][0]["kind"], "CUSTOMER", "{by_name}");
    assert_eq!(
        customers_of(&search(&app, &key, "q=shop.example").await),
        [eva.as_str()]
    );

    // Filters: status, agent, tag, date.
    let done = send(
        &app,
        Method::PUT,
        &format!("/rest/v1/conversation/{oskar}/status"),
        &key,
        Some(json!({"status": "DONE"})),
    )
    .await;
    assert!(done.status().is_success());
    assert_eq!(
        customers_of(&search(&app, &key, "q=order&status=DONE").await),
        [oskar.as_str()]
    );
    let assigned = app
        .post(
            &format!("/rest/v1/customer/{oskar}/assign"),
            &key,
            json!({"userId": agent}),
        )
        .await;
    assert!(assigned.status().is_success());
    assert_eq!(
        customers_of(&search(&app, &key, &format!("q=order&agent={agent}")).await),
        [oskar.as_str()]
    );
    assert_eq!(search(&app, &key, "q=order&tag=vip").await["page"]["totalElements"], 2);
    assert_eq!(
        search(&app, &key, "q=order&from=2999-01-01T00:00:00Z").await["page"]["totalElements"],
        0
    );
    assert_eq!(
        search(&app, &key, "q=order&to=2999-01-01T00:00:00Z").await["page"]["totalElements"],
        3
    );

    // Paged: the same order across pages, no hit twice.
    let first = search(&app, &key, "q=order&pageSize=2").await;
    let second = search(&app, &key, "q=order&pageSize=2&pageNumber=1").await;
    assert_eq!(
        (
            first["results"].as_array().unwrap().len(),
            second["results"].as_array().unwrap().len()
        ),
        (2, 1)
    );
    let mut ids: Vec<Value> = [&first, &second]
        .iter()
        .flat_map(|p| p["results"].as_array().unwrap().iter().map(|h| h["messageId"].clone()))
        .collect();
    ids.dedup();
    assert_eq!(ids.len(), 3);

    // The index follows writes: a renamed customer, a deleted one.
    let renamed = send(
        &app,
        Method::PUT,
        &format!("/rest/v1/customer/{eva}"),
        &key,
        Some(json!({"firstName": "Evelyn"})),
    )
    .await;
    assert!(renamed.status().is_success());
    assert_eq!(customers_of(&search(&app, &key, "q=evelyn").await), [eva.as_str()]);
    assert_eq!(
        send(&app, Method::DELETE, &format!("/rest/v1/customer/{oskar}"), &key, None)
            .await
            .status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(search(&app, &key, "q=2044").await["page"]["totalElements"], 0);

    // Never across tenants; a query without a word finds nothing, and one
    // longer than documented is refused at `q`.
    assert_eq!(
        customers_of(&search(&app, &beta_key, "q=refund").await),
        [stranger.as_str()]
    );
    for empty in ["q=***", "q="] {
        assert_eq!(search(&app, &key, empty).await["page"]["totalElements"], 0, "{empty}");
    }
    let refused = expect_problem(
        app.get(&format!("/rest/v1/search?q={}", "a".repeat(501)), &key).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(fields(&refused), ["q"]);

    // Agents search from the inbox; the passage comes cut at the matched words.
    let cookie = session(&app, "agent@alpha.example").await;
    let found = server_fn_ok(&app, "inbox_search", &cookie, &[("q", "refund"), ("mine", "false")]).await;
    assert_eq!(found["total"], 2, "{found}");
    let pieces = found["hits"][0]["pieces"].as_array().unwrap();
    assert!(
        pieces
            .iter()
            .any(|p| p[1] == true && p[0].as_str().unwrap().eq_ignore_ascii_case("refund")),
        "{found}"
    );
    let mine = server_fn_ok(&app, "inbox_search", &cookie, &[("q", "refund"), ("mine", "true")]).await;
    assert_eq!(mine["total"], 0);
}

backend_tests!(search_finds_words_in_messages_and_customers);
