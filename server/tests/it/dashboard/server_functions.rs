//! Server functions at work: admins manage webhooks, and agents set their
//! presence from the top bar (which feeds the agent reports).

use rapport_core::{
    backend_tests,
    model::Role,
    reports::{api::DateFilter, times::TimesKind},
    testing::TestDb,
};
use reqwest::{header, Response, StatusCode};

use super::{page, server_fn, session};
use crate::utils::TestApp;

async fn admins_manage_webhooks_through_server_functions(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    app.user(&tenant, "admin@example.com", Role::Admin, false).await;
    app.user(&tenant, "super@example.com", Role::Supervisor, false).await;
    let admin = session(&app, "admin@example.com").await;
    let supervisor = session(&app, "super@example.com").await;
    let receiver = crate::receiver::Receiver::start().await;

    let created = server_fn(
        &app,
        "create_webhook",
        &admin,
        &[("url", receiver.url.as_str()), ("event_types[0]", "message.received")],
    )
    .await;
    assert_eq!(created.status(), StatusCode::OK);
    let created: serde_json::Value = created.json().await.unwrap();
    let secret = created["secret"].as_str().unwrap().to_string();
    let id = created["webhook"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        created["webhook"]["event_types"],
        serde_json::json!(["message.received"])
    );

    let listed: serde_json::Value = server_fn(&app, "list_webhooks", &admin, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed[0]["id"], id.as_str());
    assert!(listed[0].get("secret").is_none());

    let test = server_fn(&app, "send_test_webhook", &admin, &[("id", id.as_str())]).await;
    assert_eq!(test.status(), StatusCode::OK);
    let got = receiver.wait_for(1, std::time::Duration::from_secs(20)).await;
    got[0].verify(&secret);
    let mut log = serde_json::Value::Null;
    for _ in 0..50 {
        log = server_fn(&app, "webhook_attempts", &admin, &[("id", id.as_str())])
            .await
            .json()
            .await
            .unwrap();
        if log.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(log[0]["status_code"], 200);
    assert_eq!(log[0]["event_type"], "webhook.test");

    for name in ["list_webhooks", "create_webhook", "delete_webhook"] {
        let call = server_fn(
            &app,
            name,
            &supervisor,
            &[("id", id.as_str()), ("url", "https://x.example.com")],
        )
        .await;
        assert_eq!(call.status(), StatusCode::FORBIDDEN, "{name}");
    }
    let bad = server_fn(&app, "create_webhook", &admin, &[("url", "not a url")]).await;
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let deleted = server_fn(&app, "delete_webhook", &admin, &[("id", id.as_str())]).await;
    // The hydrated page is sent on to the list.
    assert_eq!(deleted.status(), StatusCode::OK);
    assert_eq!(deleted.headers()[header::LOCATION], "/settings/webhooks");
    let listed: serde_json::Value = server_fn(&app, "list_webhooks", &admin, &[])
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed, serde_json::json!([]));
}

async fn agents_set_their_presence_from_the_top_bar(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, _) = app.tenant_with_key("Alpha").await;
    let kim = app.user(&tenant, "kim@example.com", Role::Agent, false).await;
    let cookie = session(&app, "kim@example.com").await;
    let status = |response: Response| async move {
        assert_eq!(response.status(), StatusCode::OK);
        response.json::<Option<String>>().await.unwrap().unwrap_or_default()
    };
    assert_eq!(
        status(server_fn(&app, "my_presence", &cookie, &[]).await).await,
        "OFFLINE"
    );
    let html = page(&app, "/", &cookie).await.text().await.unwrap();
    assert!(html.contains(r#"aria-label="Your status""#), "{html}");

    let set = server_fn(&app, "set_my_presence", &cookie, &[("status", "ONLINE")]).await;
    assert_eq!(status(set).await, "ONLINE");
    assert_eq!(
        status(server_fn(&app, "my_presence", &cookie, &[]).await).await,
        "ONLINE"
    );
    assert_eq!(
        status(server_fn(&app, "presence_heartbeat", &cookie, &[]).await).await,
        "ONLINE"
    );
    // The page shows it pressed, also without JavaScript.
    let html = page(&app, "/", &cookie).await.text().await.unwrap();
    let online = html.find(">Online<").expect("an Online button");
    let button = &html[html[..online].rfind("<button").unwrap()..online];
    assert!(button.contains(r#"aria-pressed="true""#), "{button}");

    // It feeds the agent reports: an online interval, open until now.
    let week = DateFilter::default();
    let times = app
        .services
        .agent_times(&tenant, TimesKind::Online, &week)
        .await
        .unwrap();
    assert_eq!(times.len(), 1);
    assert_eq!(times[0].user_id, kim);
    let set = server_fn(&app, "set_my_presence", &cookie, &[("status", "AWAY")]).await;
    assert_eq!(status(set).await, "AWAY");
    // The online interval is closed: its end no longer follows the clock.
    let closed = app
        .services
        .agent_times(&tenant, TimesKind::Online, &week)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(30)).await;
    let later = app
        .services
        .agent_times(&tenant, TimesKind::Online, &week)
        .await
        .unwrap();
    assert_eq!(closed, later);

    // Nonsense and strangers change nothing.
    let bad = server_fn(&app, "set_my_presence", &cookie, &[("status", "SLEEPING")]).await;
    assert!(!bad.status().is_success());
    let stranger = server_fn(&app, "set_my_presence", "rapport_session=nope", &[("status", "ONLINE")]).await;
    assert_eq!(stranger.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(status(server_fn(&app, "my_presence", &cookie, &[]).await).await, "AWAY");
    let signed_out = server_fn(&app, "my_presence", "rapport_session=nope", &[]).await;
    assert_eq!(signed_out.status(), StatusCode::OK);
    assert_eq!(signed_out.json::<Option<String>>().await.unwrap(), None);
    app.stop().await;
}

backend_tests!(
    agents_set_their_presence_from_the_top_bar,
    admins_manage_webhooks_through_server_functions,
);
