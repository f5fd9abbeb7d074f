//! Replies by mail to visitors who have left, on both backends: an agent's
//! reply that no page carried is scheduled to go by mail, goes (when the job
//! falls due) to the address of the visitor's offline form, once, with the
//! replies in a row in one mail; a reply a page carried does not go; and the
//! mail's continue link shows a button on `GET`, hands a visitor token of
//! that one conversation to the browser on `POST`, and answers 404 once
//! expired or for anything else.

use rapport_core::{backend_tests, model::PageRequest, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{ok_json, send, TestApp};

async fn unseen_replies_go_by_mail_with_a_link_that_continues_the_chat(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, key) = app.tenant_with_key("Tea Shop").await;
    let widget_key = app.widget_key(&key).await;
    let (customer, token) = app.widget_visitor(&widget_key, "Vera").await;
    let widget = |method: Method, path: &str, token: &str, body: Option<Value>| {
        let request = app
            .request(method, path)
            .header("rapport-widget-key", &widget_key)
            .bearer_auth(token);
        match body {
            Some(body) => request.json(&body).send(),
            None => request.send(),
        }
    };
    let reply = |text: &'static str| {
        let body = json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": text});
        let (app, key) = (&app, &key);
        async move { ok_json(app.post("/rest/v1/message", key, body).await, StatusCode::CREATED).await }
    };
    let outbox = || async {
        app.services
            .list_mail(&tenant, &PageRequest::default())
            .await
            .unwrap()
            .results
    };
    let job_due = || async {
        rapport_core::with_db!(app.services.db(), |pool| sqlx::query_scalar::<_, i64>(
            "select count(*) from jobs where kind = 'conversation.reply_mail' and job_key = $1"
        )
        .bind(&customer)
        .fetch_one(pool)
        .await)
        .unwrap()
    };

    // The visitor left a form with an address, and is gone.
    let form = json!({"name": "Vera", "email": "vera@example.com", "message": "Do you ship to Oslo?"});
    ok_json(
        widget(Method::POST, "/rest/v1/widget/form", &token, Some(form))
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    reply("Yes, we do.").await;
    reply("It takes three days.").await;
    assert_eq!(job_due().await, 1, "one job for the customer, moved by each reply");

    // The job falls due: one mail with both replies, and a continue link.
    app.services
        .mail_unseen_replies(&tenant, &customer.as_str().into())
        .await
        .unwrap();
    let mails = outbox().await;
    assert_eq!(mails.len(), 1);
    let mail = &mails[0];
    assert_eq!(
        (mail.to.as_str(), mail.subject.as_str()),
        ("vera@example.com", "Tea Shop replied to you")
    );
    assert!(
        mail.body.contains("Yes, we do.\n\nIt takes three days."),
        "{}",
        mail.body
    );
    let link = mail
        .body
        .split_whitespace()
        .find(|w| w.contains("/chat/"))
        .expect("a continue link")
        .to_string();
    // Each reply goes once.
    app.services
        .mail_unseen_replies(&tenant, &customer.as_str().into())
        .await
        .unwrap();
    assert_eq!(outbox().await.len(), 1);

    // A reply a page carried is not mailed.
    reply("Anything else?").await;
    ok_json(
        widget(Method::GET, "/rest/v1/widget/message", &token, None)
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    app.services
        .mail_unseen_replies(&tenant, &customer.as_str().into())
        .await
        .unwrap();
    assert_eq!(outbox().await.len(), 1);

    // The link: a button first (a scanner's GET spends nothing), then the chat
    // as this customer, with a visitor token of its own.
    // The link names the public URL; this test's server is elsewhere.
    let path = link[link.find("/chat/").unwrap()..].to_string();
    let page = app.request(Method::GET, &path).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(page.headers()["cache-control"], "no-store");
    let html = page.text().await.unwrap();
    assert!(
        html.contains("Continue the conversation") && !html.contains("vt_"),
        "{html}"
    );
    let chat = app.request(Method::POST, &path).send().await.unwrap();
    assert_eq!(chat.status(), StatusCode::OK);
    let html = chat.text().await.unwrap();
    let handed = html
        .split("data-rapport-continue=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page hands over the visitor")
        .to_string();
    let (handed_customer, handed_token) = handed.split_once(':').unwrap();
    assert_eq!(handed_customer, customer);
    assert_ne!(handed_token, token, "a token of its own");
    let history = ok_json(
        widget(Method::GET, "/rest/v1/widget/message", handed_token, None)
            .await
            .unwrap(),
        StatusCode::OK,
    )
    .await;
    assert!(history.to_string().contains("It takes three days."), "{history}");

    // Expired, or never issued: nothing.
    rapport_core::with_db!(app.services.writer(), |pool| sqlx::query(
        "update continue_links set expires_at = 0"
    )
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    for path in [path.as_str(), "/chat/not-a-token"] {
        let gone = app.request(Method::POST, path).send().await.unwrap();
        assert_eq!(gone.status(), StatusCode::NOT_FOUND, "{path}");
    }

    // With 0 minutes the workspace mails no replies.
    ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &key,
            Some(json!({"replyByMailMinutes": 0})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let (other, _) = app.widget_visitor(&widget_key, "Olga").await;
    let body = json!({"customerId": other, "isExternalId": false, "type": "MESSAGE", "message": "Hello"});
    ok_json(app.post("/rest/v1/message", &key, body).await, StatusCode::CREATED).await;
    let jobs: i64 = rapport_core::with_db!(app.services.db(), |pool| sqlx::query_scalar(
        "select count(*) from jobs where kind = 'conversation.reply_mail' and job_key = $1"
    )
    .bind(&other)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!(jobs, 0);
    let refused = send(
        &app,
        Method::PUT,
        "/rest/v1/workspace",
        &key,
        Some(json!({"replyByMailMinutes": 1441})),
    )
    .await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    app.stop().await;
}

backend_tests!(unseen_replies_go_by_mail_with_a_link_that_continues_the_chat);
