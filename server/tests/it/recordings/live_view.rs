//! A live viewer, for the tenant's agents only: the script's control stream
//! asks for a snapshot, and the viewer hears each batch as it is stored,
//! through another instance too.

use rapport_core::{backend_tests, db::Backend, model::Role, testing::TestDb, time::now_ms};
use reqwest::{header, Method, StatusCode};
use serde_json::json;

use super::{append, start, WAIT};
use crate::{
    dashboard::session,
    utils::{ok_json, read_until, TestApp},
};

async fn a_live_viewer_sees_each_batch_as_it_is_stored(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Live").await;
    let (other_tenant, _) = app.tenant_with_key("Elsewhere").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "agent@live.example", Role::Agent, false).await;
    app.user(&other_tenant, "agent@elsewhere.example", Role::Agent, false)
        .await;
    let agent = session(&app, "agent@live.example").await;
    let stranger = session(&app, "agent@elsewhere.example").await;
    let (id, token) = start(&app, &key, json!({"visitorId": "v-9", "url": "https://shop.example/"})).await;
    let path = format!("/sessions/{id}/live");

    // Nobody but the tenant's agents (or a live-view grant) may watch.
    let anonymous = app.request(Method::GET, &path).send().await.unwrap();
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED);
    let theirs = app
        .request(Method::GET, &path)
        .header(header::COOKIE, &stranger)
        .send()
        .await
        .unwrap();
    assert_eq!(theirs.status(), StatusCode::NOT_FOUND);

    // The script's control stream says nobody watches yet.
    let mut control = app
        .request(Method::GET, &format!("/rest/v1/widget/recording/{id}/control"))
        .header("rapport-widget-key", &key)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(control.status(), StatusCode::OK);
    read_until(&mut control, r#"{"watched":false}"#, WAIT).await;

    // With PostgreSQL the viewer watches through another instance.
    let viewer_app = match app.services.db().backend() {
        Backend::Postgres => Some(app.another_instance().await),
        Backend::Sqlite => None,
    };
    let through = viewer_app.as_ref().unwrap_or(&app);
    let mut viewer = through
        .request(Method::GET, &path)
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(viewer.status(), StatusCode::OK);
    read_until(&mut control, r#""snapshot":true"#, WAIT).await;
    let batch = json!({"seq": 0, "events": [{"type": 2, "timestamp": now_ms(), "data": {"text": "typed-x"}}]});
    let ack = ok_json(append(&app, &key, &id, &token, &batch, true).await, StatusCode::OK).await;
    assert_eq!(ack["watched"], true, "the script learns someone watches");
    let seen = read_until(&mut viewer, "typed-x", WAIT).await;
    assert!(seen.contains("event: events"), "{seen}");

    // The replay reads the same, for agents only.
    let events = app
        .request(Method::GET, &format!("/sessions/{id}/events"))
        .header(header::COOKIE, &agent)
        .send()
        .await
        .unwrap();
    assert_eq!(ok_json(events, StatusCode::OK).await[0]["data"]["text"], "typed-x");
    let events = app
        .request(Method::GET, &format!("/sessions/{id}/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), StatusCode::UNAUTHORIZED);
    drop(viewer);
    if let Some(other) = viewer_app {
        other.stop().await;
    }
}

backend_tests!(a_live_viewer_sees_each_batch_as_it_is_stored,);
