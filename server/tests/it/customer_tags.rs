//! Customers' tags, language and page (our extensions, which routing reads): set
//! and kept over REST, found with `?tag=`, reported by the widget (`pageUrl`,
//! `language`, `POST /widget/tags`), and shown and changed in the inbox.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, server_fn, server_fn_ok, Cast},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

fn ids(page: &Value) -> Vec<String> {
    let mut ids: Vec<String> = page["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

async fn customers_carry_tags_and_a_language(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;

    let bad = app
        .post(
            "/rest/v1/customer",
            &t,
            json!({"tags": ["a", "a", " "], "language": "not a tag!"}),
        )
        .await;
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["tags[1]", "tags[2]", "language"]);
    assert_eq!(p["errors"][0]["code"], "duplicate");
    assert_eq!(p["errors"][2]["code"], "invalid_language");
    let many: Vec<String> = (0..51).map(|i| format!("t{i}")).collect();
    let p = expect_problem(
        app.post("/rest/v1/customer", &t, json!({"tags": many})).await,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    )
    .await;
    assert_eq!(p["errors"][0]["code"], "too_many");

    let vip = ok_json(
        app.post(
            "/rest/v1/customer",
            &t,
            json!({"firstName": "Vi", "tags": ["vip", " de "], "language": "de-CH"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(vip["tags"], json!(["vip", "de"]));
    assert_eq!(vip["language"], "de-CH");
    assert_eq!(vip["pageUrl"], Value::Null);
    let vip_id = vip["id"].as_str().unwrap().to_string();

    // Replacing without tags or language keeps them; [] and "" remove them.
    let put = |body: Value| {
        let path = format!("/rest/v1/customer/{vip_id}");
        let app = &app;
        let t = &t;
        async move { ok_json(send(app, Method::PUT, &path, t, Some(body)).await, StatusCode::OK).await }
    };
    let kept = put(json!({"firstName": "Vivian"})).await;
    assert_eq!(kept["firstName"], "Vivian");
    assert_eq!(kept["tags"], json!(["vip", "de"]));
    assert_eq!(kept["language"], "de-CH");
    let over = ok_json(
        app.post("/rest/v1/customer", &t, json!({"id": vip_id, "tags": ["vip", "gold"]}))
            .await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(over["tags"], json!(["vip", "gold"]));
    assert_eq!(over["language"], "de-CH");
    let cleared = put(json!({"tags": [], "language": ""})).await;
    assert_eq!(cleared["tags"], json!([]));
    assert_eq!(cleared["language"], Value::Null);
    put(json!({"firstName": "Vivian", "tags": ["vip", "de"]})).await;

    // `?tag=` finds whole tags, exactly.
    let create = |tags: Value| {
        let app = &app;
        let t = &t;
        async move {
            ok_json(
                app.post("/rest/v1/customer", t, json!({"tags": tags})).await,
                StatusCode::CREATED,
            )
            .await["id"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    let near = create(json!(["vipx", "avip"])).await;
    let second = create(json!(["x", "vip"])).await;
    let quoted = create(json!(["say \"vip\"", "[vip]"])).await;
    create(json!([])).await;
    ok_json(
        app.post("/rest/v1/customer", &other, json!({"tags": ["vip"]})).await,
        StatusCode::CREATED,
    )
    .await;
    let mut expected = vec![vip_id.clone(), second.clone()];
    expected.sort();
    let found = ok_json(app.get("/rest/v1/customer?tag=vip", &t).await, StatusCode::OK).await;
    assert_eq!(ids(&found), expected);
    assert_eq!(found["page"]["totalElements"], 2);
    let found = ok_json(app.get("/rest/v1/customer?tag=vipx", &t).await, StatusCode::OK).await;
    assert_eq!(ids(&found), [near.as_str()]);
    let found = ok_json(
        app.get("/rest/v1/customer?tag=say%20%22vip%22", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(ids(&found), [quoted.as_str()]);
    let found = ok_json(app.get("/rest/v1/customer?tag=%5Bvip%5D", &t).await, StatusCode::OK).await;
    assert_eq!(ids(&found), [quoted]);
    let found = ok_json(app.get("/rest/v1/customer?tag=VIP", &t).await, StatusCode::OK).await;
    assert_eq!(found["page"]["totalElements"], 0);
    let found = ok_json(
        app.get("/rest/v1/customer?tag=vip&search=viv", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(ids(&found), [vip_id]);
    let all = ok_json(app.get("/rest/v1/customer?tag=", &t).await, StatusCode::OK).await;
    assert_eq!(all["page"]["totalElements"], 5);
}

async fn the_widget_reports_page_language_and_tags(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast { key: t, admin, .. } = Cast::new(&app).await;
    let widget_key = ok_json(app.get("/rest/v1/widget/key", &t).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let widget = |method: Method, path: &str| app.request(method, path).header("rapport-widget-key", &widget_key);

    let bad = widget(Method::POST, "/rest/v1/widget/visitor")
        .json(&json!({"pageUrl": "javascript:alert(1)", "language": "??"}))
        .send()
        .await
        .unwrap();
    let p = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["pageUrl"]);
    let started = widget(Method::POST, "/rest/v1/widget/visitor")
        .json(&json!({"firstName": "Vera", "language": "fr", "pageUrl": "https://shop.example.com/"}))
        .send()
        .await
        .unwrap();
    let identity = ok_json(started, StatusCode::CREATED).await;
    let token = identity["visitorToken"].as_str().unwrap().to_string();
    let id = identity["customerId"].as_str().unwrap().to_string();
    let customer = ok_json(app.get(&format!("/rest/v1/customer/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(customer["language"], "fr");
    assert_eq!(customer["pageUrl"], "https://shop.example.com/");

    // A message says where the visitor is now; a bad one stores nothing.
    let refused = widget(Method::POST, "/rest/v1/widget/message")
        .bearer_auth(&token)
        .json(&json!({"message": "Hello", "pageUrl": "not a url", "language": "fr-CH"}))
        .send()
        .await
        .unwrap();
    let p = expect_problem(refused, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["pageUrl"]);
    let sent = widget(Method::POST, "/rest/v1/widget/message")
        .bearer_auth(&token)
        .json(&json!({"message": "Hello", "pageUrl": "https://shop.example.com/checkout", "language": "fr-CH"}))
        .send()
        .await
        .unwrap();
    ok_json(sent, StatusCode::CREATED).await;
    let customer = ok_json(app.get(&format!("/rest/v1/customer/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(customer["pageUrl"], "https://shop.example.com/checkout");
    assert_eq!(customer["language"], "fr-CH");
    let messages = ok_json(
        app.get(&format!("/rest/v1/customer/{id}/message"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(messages["page"]["totalElements"], 1, "only the accepted message");
    // Without them, the customer keeps what it had.
    let plain = widget(Method::POST, "/rest/v1/widget/message")
        .bearer_auth(&token)
        .json(&json!({"message": "Still there?"}))
        .send()
        .await
        .unwrap();
    ok_json(plain, StatusCode::CREATED).await;
    let customer = ok_json(app.get(&format!("/rest/v1/customer/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(customer["pageUrl"], "https://shop.example.com/checkout");

    // The visitor script tags its visitor; tags it has are kept, case-insensitively.
    let tag = |body: Value| {
        widget(Method::POST, "/rest/v1/widget/tags")
            .bearer_auth(&token)
            .json(&body)
            .send()
    };
    let tagged = ok_json(tag(json!({"tags": ["vip", "checkout"]})).await.unwrap(), StatusCode::OK).await;
    assert_eq!(tagged["tags"], json!(["vip", "checkout"]));
    let again = ok_json(tag(json!({"tags": ["VIP", "fr"]})).await.unwrap(), StatusCode::OK).await;
    assert_eq!(again["tags"], json!(["vip", "checkout", "fr"]));
    let empty = tag(json!({"tags": []})).await.unwrap();
    let p = expect_problem(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&p), ["tags"]);
    let unauthenticated = widget(Method::POST, "/rest/v1/widget/tags")
        .json(&json!({"tags": ["x"]}))
        .send()
        .await
        .unwrap();
    expect_problem(unauthenticated, StatusCode::UNAUTHORIZED, "missing_visitor_token").await;
    let found = ok_json(app.get("/rest/v1/customer?tag=checkout", &t).await, StatusCode::OK).await;
    assert_eq!(ids(&found), [id.as_str()]);

    // The page's tags are kept apart from those agents and integrations set:
    // any page can claim "vip".
    let customer = ok_json(app.get(&format!("/rest/v1/customer/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(customer["pageTags"], json!(["vip", "checkout", "fr"]));
    assert_eq!(customer["tags"], json!([]));

    // The inbox shows them, and agents add and remove their own tags there.
    let thread = server_fn_ok(&app, "inbox_thread", &admin, &[("customer_id", &id)]).await;
    assert_eq!(thread["page_tags"], json!(["vip", "checkout", "fr"]));
    assert_eq!(thread["tags"], json!([]));
    assert_eq!(thread["page_url"], "https://shop.example.com/checkout");
    assert_eq!(thread["language"], "fr-CH");
    server_fn_ok(
        &app,
        "inbox_tags",
        &admin,
        &[("customer_id", &id), ("add", "billing, de")],
    )
    .await;
    let thread = server_fn_ok(&app, "inbox_thread", &admin, &[("customer_id", &id)]).await;
    assert_eq!(thread["tags"], json!(["billing", "de"]));
    server_fn_ok(&app, "inbox_tags", &admin, &[("customer_id", &id), ("remove", "vip")]).await;
    let thread = server_fn_ok(&app, "inbox_thread", &admin, &[("customer_id", &id)]).await;
    assert_eq!(
        thread["page_tags"],
        json!(["vip", "checkout", "fr"]),
        "agents change their own tags, not the page's"
    );
    let html = page(&app, &format!("/inbox/{id}"), &admin).await.text().await.unwrap();
    assert!(html.contains("Remove the tag billing"), "the inbox shows the tags");
    assert!(html.contains("Tags from the page"), "and the page's, apart");
    assert!(html.contains("https://shop.example.com/checkout"), "and the page");
    let too_long = "x".repeat(65);
    let refused = server_fn(&app, "inbox_tags", &admin, &[("customer_id", &id), ("add", &too_long)]).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.text().await.unwrap().contains("tags[0]"));
    let audit = ok_json(app.get("/rest/v1/audit?action=customer.tags", &t).await, StatusCode::OK).await;
    assert_eq!(
        audit["page"]["totalElements"], 3,
        "two widget changes, one agent's (removing what is not there changes nothing)"
    );
}

backend_tests!(
    customers_carry_tags_and_a_language,
    the_widget_reports_page_language_and_tags
);
