//! Messages over the REST API: per-type rules, history and inbound messages,
//! and a `text/plain` body as the message text.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{expect_problem, fields, ok_json, TestApp};

async fn messages_are_validated_per_type_and_kept(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    let customer = ok_json(app.post("/rest/v1/customer", &t, json!({})).await, StatusCode::CREATED).await;
    let id = customer["id"].as_str().unwrap();

    let cases = [
        (json!({}), vec!["customerId", "isExternalId", "type"]),
        (
            json!({"customerId": id, "isExternalId": false, "type": "MESSAGE"}),
            vec!["message"],
        ),
        (
            json!({"customerId": id, "isExternalId": false, "type": "AUDIO", "url": "file:///etc/passwd"}),
            vec!["url"],
        ),
        (
            json!({"customerId": id, "isExternalId": false, "type": "VIDEO"}),
            vec!["url"],
        ),
        (
            json!({"customerId": id, "isExternalId": false, "type": "CARD", "buttonText": "Pay"}),
            vec!["buttonLink"],
        ),
    ];
    for (body, expected) in cases {
        let problem = expect_problem(
            app.post("/rest/v1/message", &t, body.clone()).await,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        )
        .await;
        assert_eq!(fields(&problem), expected, "{body}");
    }
    let bad_type = app
        .post(
            "/rest/v1/message",
            &t,
            json!({"customerId": id, "isExternalId": false, "type": "FAX"}),
        )
        .await;
    assert_eq!(
        fields(&expect_problem(bad_type, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await),
        ["type"]
    );
    // Unknown and foreign customers are 404, nothing is stored.
    let foreign = app
        .post(
            "/rest/v1/message",
            &other,
            json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "x"}),
        )
        .await;
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    expect_problem(
        app.get(&format!("/rest/v1/conversation/{id}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    for body in [
        json!({"customerId": id, "isExternalId": false, "type": "MESSAGE", "message": "one"}),
        json!({"customerId": id, "isExternalId": false, "type": "AUDIO", "url": "https://cdn.example.com/a.mp3"}),
        json!({"customerId": id, "isExternalId": false, "type": "CARD", "buttonText": "Pay", "buttonLink": "https://pay.example.com/1"}),
    ] {
        ok_json(app.post("/rest/v1/message", &t, body).await, StatusCode::CREATED).await;
    }
    let history = ok_json(
        app.get(&format!("/rest/v1/customer/{id}/message?pageSize=2"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(history["page"]["totalElements"], 3);
    assert_eq!(history["results"][0]["type"], "CARD", "newest first");
    assert_eq!(history["results"][1]["type"], "AUDIO");
    assert_eq!(history["results"][0]["direction"], "OUTBOUND");
    assert_eq!(
        history["results"][0]["deliveredAt"],
        Value::Null,
        "kept until the widget fetches it"
    );

    // Inbound with an unknown external id creates the customer.
    let inbound = ok_json(
        app.post(
            "/rest/v1/message/inbound",
            &t,
            json!({"customerId": "wa-4915", "isExternalId": true, "type": "MESSAGE", "message": "hi"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(inbound["externalId"], "wa-4915");
    let unread = ok_json(app.get("/rest/v1/conversation?status=UNREAD", &t).await, StatusCode::OK).await;
    assert_eq!(unread["page"]["totalElements"], 1);
    assert_eq!(unread["results"][0]["lastMessage"]["text"], "hi");
    app.stop().await;
}

/// The spec: "the request body is used as the message text". A `text/plain` body
/// is the text, and the other fields come as query parameters, checked by the
/// same rules as a JSON body's.
async fn a_text_body_is_the_message_text(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Alpha").await;
    let (_, other) = app.tenant_with_key("Beta").await;
    ok_json(
        app.post("/rest/v1/customer", &t, json!({"externalId": "crm-7"})).await,
        StatusCode::CREATED,
    )
    .await;
    let plain = |token: &str, query: &str, body: &'static [u8]| {
        app.request(Method::POST, &format!("/rest/v1/message?{query}"))
            .bearer_auth(token)
            .header("content-type", "text/plain; charset=utf-8")
            .body(body)
            .send()
    };

    let sent = ok_json(
        plain(
            &t,
            "customerId=crm-7&isExternalId=true",
            "Grüße, your parcel left today".as_bytes(),
        )
        .await
        .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(
        sent["type"], "MESSAGE",
        "a text body is a MESSAGE unless the query says otherwise"
    );
    assert_eq!(sent["message"], "Grüße, your parcel left today");
    assert_eq!(sent["direction"], "OUTBOUND");
    let card = ok_json(
        plain(
            &t,
            "customerId=crm-7&isExternalId=true&type=CARD&buttonText=Track&buttonLink=https%3A%2F%2Fship.example.com%2F1",
            b"Your parcel",
        )
        .await
        .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(card["buttonLink"], "https://ship.example.com/1");

    // The same rules as JSON, naming the same fields.
    let missing = plain(&t, "", b"hello").await.unwrap();
    let problem = expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["customerId", "isExternalId"]);
    let empty = plain(&t, "customerId=crm-7&isExternalId=true", b"").await.unwrap();
    let problem = expect_problem(empty, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["message"]);
    let not_utf8 = plain(&t, "customerId=crm-7&isExternalId=true", b"\xff\xfe")
        .await
        .unwrap();
    let problem = expect_problem(not_utf8, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["message"]);
    let bad_flag = plain(&t, "customerId=crm-7&isExternalId=maybe", b"hi").await.unwrap();
    let problem = expect_problem(bad_flag, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["isExternalId"]);
    // Another tenant cannot reach the customer; other media types stay 415.
    let foreign = plain(&other, "customerId=crm-7&isExternalId=true", b"hi")
        .await
        .unwrap();
    expect_problem(foreign, StatusCode::NOT_FOUND, "not_found").await;
    let xml = app
        .request(Method::POST, "/rest/v1/message?customerId=crm-7&isExternalId=true")
        .bearer_auth(&t)
        .header("content-type", "application/xml")
        .body("<m/>")
        .send()
        .await
        .unwrap();
    expect_problem(xml, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type").await;

    let history = ok_json(
        app.get("/rest/v1/conversation?status=UNRESOLVED", &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(
        history["page"]["totalElements"], 1,
        "only the two good messages were stored"
    );
    app.stop().await;
}

backend_tests!(
    messages_are_validated_per_type_and_kept,
    a_text_body_is_the_message_text
);
