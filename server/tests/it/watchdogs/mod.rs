//! Watchdogs on live traffic: each of the five types fires on its real event
//! (a script error reported by the visitor script, a customer message, an
//! assignment, a visitor's form, a settings write), and each kind of receiver
//! gets the alert: a mail in the outbox, a notification for the user, a signed
//! `watchdog.alert` delivery at a real HTTP receiver (`firing`). Alerts are
//! grouped in windows of the period an admin sets (`grouping`), and
//! notifications reach only their user's bell, live on the user's event
//! stream and nobody else's, on any instance (`notifications`).

mod firing;
mod grouping;
mod notifications;

use std::time::{Duration, Instant};

use rapport_core::{ids::TenantId, mail::Mail, model::PageRequest};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use crate::utils::{ok_json, TestApp};

const WAIT: Duration = Duration::from_secs(30);

const TYPES: [&str; 5] = [
    "JAVASCRIPT_ERROR",
    "MESSAGE_RECEIVED",
    "CUSTOMER_ASSIGNED",
    "FORM_SUBMISSION",
    "SETTING_CHANGED",
];

/// Creates a watchdog; returns its id.
async fn watchdog(app: &TestApp, key: &str, name: &str, kind: &str, receivers: Value) -> String {
    let made = ok_json(
        app.post(
            "/rest/v1/watchdog",
            key,
            json!({"name": name, "watchdogType": kind, "receivers": receivers}),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    made["id"].as_str().unwrap().to_string()
}

/// A visitor of the tenant: `(widget key, customer id, visitor token)`.
async fn visitor(app: &TestApp, key: &str) -> (String, String, String) {
    let widget_key = ok_json(app.get("/rest/v1/widget/key", key).await, StatusCode::OK).await["widgetKey"]
        .as_str()
        .unwrap()
        .to_string();
    let started = ok_json(
        app.request(Method::POST, "/rest/v1/widget/visitor")
            .header("rapport-widget-key", &widget_key)
            .json(&json!({"firstName": "Vera"}))
            .send()
            .await
            .unwrap(),
        StatusCode::CREATED,
    )
    .await;
    (
        widget_key,
        started["customerId"].as_str().unwrap().to_string(),
        started["visitorToken"].as_str().unwrap().to_string(),
    )
}

/// Reports `n` script errors in one batch, ids `prefix-0…`.
async fn script_errors(app: &TestApp, widget_key: &str, prefix: &str, n: usize) {
    let now = chrono::Utc::now().timestamp_millis();
    let events: Vec<Value> = (0..n)
        .map(|i| {
            json!({"type": "SCRIPT_ERROR", "id": format!("{prefix}-{i}"), "at": now, "visitorId": "v1",
                   "url": "https://shop.example.com/checkout", "message": format!("TypeError: x is undefined ({prefix}-{i})")})
        })
        .collect();
    // Each batch from its own page, at its own address (read where the test
    // trusts a proxy): one address may report a tenth of the tenant's minute.
    let page = prefix.bytes().map(u32::from).sum::<u32>() % 250;
    let answer = ok_json(
        app.request(Method::POST, "/rest/v1/widget/track")
            .header("rapport-widget-key", widget_key)
            .header("x-forwarded-for", format!("198.51.100.{page}"))
            .json(&json!({"events": events}))
            .send()
            .await
            .unwrap(),
        StatusCode::ACCEPTED,
    )
    .await;
    assert_eq!(answer["accepted"], n, "{answer}");
}

/// The tenant's alert mails, oldest first.
async fn alert_mails(app: &TestApp, tenant: &TenantId) -> Vec<Mail> {
    let page = PageRequest {
        page_size: Some(200),
        ..PageRequest::default()
    };
    let mut mails: Vec<Mail> = app
        .services
        .list_mail(tenant, &page)
        .await
        .unwrap()
        .results
        .into_iter()
        .filter(|m| m.about.as_deref().is_some_and(|a| a.starts_with("alert:")))
        .collect();
    mails.reverse();
    mails
}

/// Waits until the tenant has `n` alert mails; returns them.
async fn wait_for_mails(app: &TestApp, tenant: &TenantId, n: usize) -> Vec<Mail> {
    let deadline = Instant::now() + WAIT;
    loop {
        let mails = alert_mails(app, tenant).await;
        if mails.len() >= n || Instant::now() > deadline {
            assert_eq!(
                mails.len(),
                n,
                "{:?}",
                mails.iter().map(|m| &m.subject).collect::<Vec<_>>()
            );
            return mails;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The notifications-only event stream of a signed-in user.
async fn bell_stream(app: &TestApp, cookie: &str) -> reqwest::Response {
    let stream = app
        .request(Method::GET, "/inbox/events?only=notifications")
        .header(header::COOKIE, cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), StatusCode::OK);
    stream
}
