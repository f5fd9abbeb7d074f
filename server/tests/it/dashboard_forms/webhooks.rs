//! Webhooks edited in the dashboard: field-level errors, the secret flashed
//! once without JavaScript, editing, a test event and its replay, roles and
//! tenant isolation.

use rapport_core::{backend_tests, testing::TestDb};
use reqwest::{header, Method, StatusCode};
use serde_json::{json, Value};

use super::{assert_refused, json_of};
use crate::{
    dashboard::{server_fn, Cast},
    utils::TestApp,
};

/// A server function called as a plain HTML form post (no JavaScript).
async fn plain_form_post(
    app: &TestApp,
    name: &str,
    cookie: &str,
    referer: &str,
    form: &[(&str, &str)],
) -> reqwest::Response {
    app.request(Method::POST, &format!("/api/{name}"))
        .header(header::COOKIE, cookie)
        .header(header::ACCEPT, "text/html")
        .header(header::REFERER, format!("{}{referer}", app.base))
        .form(form)
        .send()
        .await
        .unwrap()
}

async fn webhooks_are_edited_replayed_and_kept_per_tenant(db: TestDb) {
    let app = TestApp::start(db).await;
    let Cast {
        admin,
        supervisor,
        stranger,
        ..
    } = Cast::new(&app).await;
    let receiver = crate::receiver::Receiver::start().await;

    // A bad URL and an unknown event type are reported at their fields.
    let bad = server_fn(
        &app,
        "create_webhook",
        &admin,
        &[("url", "ftp://files.example.com"), ("event_types[]", "no.such.event")],
    )
    .await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = bad.text().await.unwrap();
    assert!(
        text.contains(r#"\"field\":\"url\""#) || text.contains(r#""field":"url""#),
        "{text}"
    );
    assert!(text.contains("eventTypes[0]"), "{text}");

    // Without JavaScript, the secret reaches the page once, through the flash cookie.
    let created = plain_form_post(
        &app,
        "create_webhook",
        &admin,
        "/settings/webhooks",
        &[("url", receiver.url.as_str()), ("description", "  ")],
    )
    .await;
    assert!(created.status().is_redirection(), "{}", created.status());
    let flash = created.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    assert!(
        flash.contains("Path=/settings/webhooks") && flash.contains("HttpOnly"),
        "{flash}"
    );
    let flash_cookie = flash.split(';').next().unwrap();
    let taken = json_of(server_fn(&app, "take_webhook_secret", &format!("{admin}; {flash_cookie}"), &[]).await).await;
    let secret = taken["secret"].as_str().unwrap().to_string();
    let id = taken["webhook"]["id"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    assert_eq!(
        taken["webhook"]["description"],
        Value::Null,
        "a blank description is none"
    );

    // Editing: unticking every event means all events; an unticked box disables.
    let edited = json_of(
        server_fn(
            &app,
            "update_webhook",
            &admin,
            &[
                ("id", id.as_str()),
                ("url", receiver.url.as_str()),
                ("description", "CRM"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(edited["enabled"], false);
    assert_eq!(edited["event_types"], json!([]));
    assert_eq!(edited["description"], "CRM");
    let enabled = json_of(
        server_fn(
            &app,
            "update_webhook",
            &admin,
            &[
                ("id", id.as_str()),
                ("url", receiver.url.as_str()),
                ("event_types[]", "message.received"),
                ("enabled", "on"),
            ],
        )
        .await,
    )
    .await;
    assert_eq!(enabled["enabled"], true);
    assert_eq!(
        json_of(server_fn(&app, "get_webhook", &admin, &[("id", id.as_str())]).await).await,
        enabled
    );

    // A test event, then a replay of it with the same webhook-id.
    json_of(server_fn(&app, "send_test_webhook", &admin, &[("id", id.as_str())]).await).await;
    let first = receiver.wait_for(1, std::time::Duration::from_secs(20)).await;
    first[0].verify(&secret);
    let mut log = Value::Null;
    for _ in 0..100 {
        log = json_of(server_fn(&app, "webhook_attempts", &admin, &[("id", id.as_str())]).await).await;
        if log.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(log[0]["attempt"], 1);
    let delivery = log[0]["delivery_id"].as_str().unwrap().to_string();
    json_of(
        server_fn(
            &app,
            "replay_webhook_delivery",
            &admin,
            &[("id", id.as_str()), ("delivery_id", delivery.as_str())],
        )
        .await,
    )
    .await;
    let both = receiver.wait_for(2, std::time::Duration::from_secs(20)).await;
    assert_eq!(both[1].header("webhook-id"), first[0].header("webhook-id"));
    both[1].verify(&secret);

    // Supervisors cannot change settings; another tenant's admin cannot see them.
    let names = [
        "get_webhook",
        "update_webhook",
        "rotate_webhook_secret",
        "replay_webhook_delivery",
    ];
    let form = [
        ("id", id.as_str()),
        ("url", "https://x.example.com"),
        ("delivery_id", delivery.as_str()),
    ];
    assert_refused(&app, &names, &supervisor, &form, StatusCode::FORBIDDEN).await;
    assert_refused(&app, &names, &stranger, &form, StatusCode::NOT_FOUND).await;
    assert_eq!(
        server_fn(&app, "webhook_attempts", &stranger, &[("id", id.as_str())])
            .await
            .status(),
        StatusCode::NOT_FOUND
    );
}

backend_tests!(webhooks_are_edited_replayed_and_kept_per_tenant,);
