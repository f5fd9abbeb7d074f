//! Customer satisfaction (CSAT), on both backends: the widget is asked to rate a
//! conversation once it is closed, and only then; one rating per closing; the
//! rating shows on the Conversation object, fires `csat.submitted` at a real
//! receiver, and counts in the chat report by agent; a reopened conversation is
//! asked anew when it closes; and a workspace that switches the question off
//! is never asked.

use std::time::Duration;

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    receiver::Receiver,
    utils::{expect_problem, fields, ok_json, send, TestApp},
    webhooks::subscribe,
    widget_socket::{frame, hello},
};

const WAIT: Duration = Duration::from_secs(20);

async fn visitors_rate_closed_conversations_once(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Shop").await;
    let (_, other) = app.tenant_with_key("Other shop").await;
    let receiver = Receiver::start().await;
    let (_, secret) = subscribe(&app, &t, &receiver.url, &["csat.submitted"]).await;
    let ada = ok_json(
        app.post(
            "/rest/v1/user",
            &t,
            json!({"email": "ada@shop.test", "displayName": "Ada"}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    let ada = ada["id"].as_str().unwrap().to_string();
    let key = app.widget_key(&t).await;
    let (customer, token) = app.widget_visitor(&key, "Vera").await;
    let widget = |method: Method, body: Option<Value>| {
        let request = app
            .request(method, "/rest/v1/widget/csat")
            .header("rapport-widget-key", &key)
            .bearer_auth(&token);
        match body {
            Some(body) => request.json(&body).send(),
            None => request.send(),
        }
    };
    let asked = || async { ok_json(widget(Method::GET, None).await.unwrap(), StatusCode::OK).await["ask"].clone() };
    let status_path = format!("/rest/v1/conversation/{customer}/status");
    let status = |s: &str| send(&app, Method::PUT, &status_path, &t, Some(json!({ "status": s })));
    let visitor_writes = |text: &str| {
        app.request(Method::POST, "/rest/v1/widget/message")
            .header("rapport-widget-key", &key)
            .bearer_auth(&token)
            .json(&json!({ "message": text }))
            .send()
    };

    ok_json(visitor_writes("My parcel is late").await.unwrap(), StatusCode::CREATED).await;
    ok_json(
        app.post(
            &format!("/rest/v1/customer/{customer}/assign"),
            &t,
            json!({ "userId": ada }),
        )
        .await,
        StatusCode::OK,
    )
    .await;

    // Open: not asked, and a rating is refused.
    let prompt = ok_json(widget(Method::GET, None).await.unwrap(), StatusCode::OK).await;
    assert_eq!(prompt, json!({"ask": false, "closedAt": null}));
    let early = widget(Method::POST, Some(json!({"rating": 5}))).await.unwrap();
    expect_problem(early, StatusCode::CONFLICT, "conversation_open").await;

    // Closed: the visitor's socket hears it, and the widget is asked.
    let (mut socket, ready) = hello(&app, &key, &token).await;
    assert_eq!(ready, json!({"event": "ready"}));
    ok_json(status("DONE").await, StatusCode::OK).await;
    assert_eq!(frame(&mut socket).await, json!({"event": "conversation"}));
    let prompt = ok_json(widget(Method::GET, None).await.unwrap(), StatusCode::OK).await;
    assert_eq!(prompt["ask"], true);
    assert!(prompt["closedAt"].is_string(), "the closing it asks about: {prompt}");

    // Bad input names its fields, and stores nothing.
    let bad = widget(Method::POST, Some(json!({"rating": 6, "comment": "x".repeat(1001)})))
        .await
        .unwrap();
    let problem = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["rating", "comment"]);
    let missing = widget(Method::POST, Some(json!({"comment": "no stars"})))
        .await
        .unwrap();
    let problem = expect_problem(missing, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["rating"]);
    let not_a_number = widget(Method::POST, Some(json!({"rating": "five"}))).await.unwrap();
    let problem = expect_problem(not_a_number, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["rating"]);
    assert_eq!(asked().await, true);

    // The rating: once per closing.
    let rated = ok_json(
        widget(Method::POST, Some(json!({"rating": 4, "comment": "  Quick, thanks  "})))
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    assert_eq!(rated["rating"], 4);
    assert_eq!(rated["comment"], "Quick, thanks");
    assert_eq!(rated["userId"], ada.as_str(), "the agent assigned at the closing");
    assert_eq!(frame(&mut socket).await, json!({"event": "conversation"}));
    let again = widget(Method::POST, Some(json!({"rating": 1}))).await.unwrap();
    expect_problem(again, StatusCode::CONFLICT, "already_rated").await;
    assert_eq!(asked().await, false);

    // It is on the Conversation object, for this tenant only.
    let conversation = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(conversation["csat"]["rating"], 4);
    assert_eq!(conversation["csat"]["comment"], "Quick, thanks");
    assert_eq!(conversation["csat"]["userId"], ada.as_str());
    let listed = ok_json(app.get("/rest/v1/conversation?status=DONE", &t).await, StatusCode::OK).await;
    assert_eq!(listed["results"][0]["csat"]["rating"], 4);
    expect_problem(
        app.get(&format!("/rest/v1/conversation/{customer}"), &other).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // `csat.submitted` at the receiver, signed.
    let got = receiver.wait_for(1, WAIT).await;
    got[0].verify(&secret);
    assert_eq!(got[0].event_type(), "csat.submitted");
    let body = got[0].json();
    assert_eq!(body["customerId"], customer.as_str());
    assert_eq!(
        (&body["rating"], &body["comment"]),
        (&json!(4), &json!("Quick, thanks"))
    );
    assert_eq!(body["userId"], ada.as_str());
    assert_eq!(got[0].header("rapport-actor"), format!("customer:{customer}"));

    // Reopened by the visitor, it is a new conversation: no rating shown, and
    // none asked for until it closes again. Then a second rating counts.
    ok_json(visitor_writes("One more thing").await.unwrap(), StatusCode::CREATED).await;
    let reopened = ok_json(
        app.get(&format!("/rest/v1/conversation/{customer}"), &t).await,
        StatusCode::OK,
    )
    .await;
    assert_eq!(reopened["status"], "UNREAD");
    assert!(reopened.get("csat").is_none(), "{reopened}");
    assert_eq!(asked().await, false);
    ok_json(status("DONE").await, StatusCode::OK).await;
    assert_eq!(asked().await, true);
    ok_json(
        widget(Method::POST, Some(json!({"rating": 1}))).await.unwrap(),
        StatusCode::CREATED,
    )
    .await;

    // The chat report: two ratings of Ada's, averaging 2.5; nothing of them in
    // another workspace's report.
    let report_of = |token: &str, metric: &str| {
        let body = json!({"metrics": [{"metricName": metric, "groupBy": "AGENT"}],
            "dateFilter": {"grouping": "TODAY", "timeZone": "UTC"}});
        let token = token.to_string();
        let app = &app;
        async move { ok_json(app.post("/rest/v1/report/chat", &token, body).await, StatusCode::OK).await }
    };
    for (metric, value) in [("CSAT_RESPONSES", "2"), ("CSAT_AVERAGE", "2.5")] {
        let report = report_of(&t, metric).await;
        let values: Vec<&Value> = report["results"]
            .as_object()
            .unwrap()
            .values()
            .filter_map(|bucket| bucket.get(&ada))
            .collect();
        assert_eq!(values, [&json!(value)], "{metric}: {report}");
        let theirs = report_of(&other, metric).await;
        assert!(!theirs.to_string().contains(&ada), "{theirs}");
    }

    // Switched off, the workspace's visitors are not asked, and cannot rate.
    ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &t,
            Some(json!({"csatEnabled": false})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    ok_json(visitor_writes("Back again").await.unwrap(), StatusCode::CREATED).await;
    ok_json(status("DONE").await, StatusCode::OK).await;
    assert_eq!(asked().await, false);
    let off = widget(Method::POST, Some(json!({"rating": 5}))).await.unwrap();
    expect_problem(off, StatusCode::CONFLICT, "csat_disabled").await;
    let workspace = ok_json(app.get("/rest/v1/workspace", &t).await, StatusCode::OK).await;
    assert_eq!(workspace["csatEnabled"], false);
    app.stop().await;
}

backend_tests!(visitors_rate_closed_conversations_once);
