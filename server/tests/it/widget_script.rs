//! What the visitor script needs from Rapport beyond chatting: whether the
//! workspace is open (`GET /widget/config`, from the business hours: closed, the
//! widget offers the offline form), naming its visitor (`POST /widget/profile`,
//! `Rapport.identify`), the script itself under `/visitor/`, and the demo shop
//! on an origin of its own.

use chrono::{Datelike, Utc};
use rapport_core::{backend_tests, customers::identity_signature, model::Role, testing::TestDb};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::{
    dashboard::{page, session},
    utils::{expect_problem, fields, ok_json, send, TestApp},
};

async fn config(app: &TestApp, key: &str) -> reqwest::Response {
    app.request(Method::GET, "/rest/v1/widget/config")
        .header("rapport-widget-key", key)
        .send()
        .await
        .unwrap()
}

async fn the_widget_knows_when_the_workspace_is_open(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Open").await;
    let key = app.widget_key(&t).await;

    expect_problem(
        config(&app, "wk_nobody").await,
        StatusCode::UNAUTHORIZED,
        "invalid_widget_key",
    )
    .await;
    // Without business hours: always open, and that never changes.
    let always = ok_json(config(&app, &key).await, StatusCode::OK).await;
    assert_eq!(always["open"], true);
    assert_eq!(always["nextChangeAt"], Value::Null);
    assert_eq!(always["language"], "en");

    // Business hours with today as a holiday: closed now, open again later.
    let today = Utc::now().date_naive();
    let hours = ok_json(
        app.post(
            "/rest/v1/openinghours",
            &t,
            json!({
                "name": "Office",
                "timezone": "UTC",
                "conditions": [{"type": "WEEKDAY", "weekday": "EVERYDAY", "startHours": {"hour": 0, "minute": 0}, "endHours": {"hour": 23, "minute": 59}}],
                "holidays": [{"name": "Closed today", "from": {"year": today.year(), "month": today.month(), "day": today.day()}}]
            }),
        )
        .await,
        StatusCode::CREATED,
    )
    .await;
    ok_json(
        send(
            &app,
            Method::PUT,
            "/rest/v1/workspace",
            &t,
            Some(json!({"businessHoursId": hours["id"], "language": "de"})),
        )
        .await,
        StatusCode::OK,
    )
    .await;
    let closed = ok_json(config(&app, &key).await, StatusCode::OK).await;
    assert_eq!(closed["open"], false);
    assert_eq!(closed["language"], "de");
    let reopens: chrono::DateTime<Utc> = closed["nextChangeAt"].as_str().unwrap().parse().unwrap();
    assert_eq!(
        reopens.date_naive(),
        today.succ_opt().unwrap(),
        "open again tomorrow at midnight"
    );
}

async fn the_script_names_its_visitor(db: TestDb) {
    let app = TestApp::start(db).await;
    let (_, t) = app.tenant_with_key("Names").await;
    let key = app.widget_key(&t).await;
    let (id, token) = app.widget_visitor(&key, "Vera").await;
    let identify = |token: &str, body: Value| {
        app.request(Method::POST, "/rest/v1/widget/profile")
            .header("rapport-widget-key", &key)
            .bearer_auth(token)
            .json(&body)
            .send()
    };

    expect_problem(
        identify("vt_wrong", json!({"email": "vera@example.com"}))
            .await
            .unwrap(),
        StatusCode::UNAUTHORIZED,
        "invalid_visitor",
    )
    .await;
    let bad = identify(&token, json!({"email": "not an address"})).await.unwrap();
    let problem = expect_problem(bad, StatusCode::UNPROCESSABLE_ENTITY, "validation_failed").await;
    assert_eq!(fields(&problem), ["email"]);

    // Named: given fields replace, the others are kept; no assignment sneaks in.
    // Signed by the site, `externalId` and `email` are the customer's.
    let secret = ok_json(
        app.post("/rest/v1/widget/identity/rotate", &t, json!({})).await,
        StatusCode::OK,
    )
    .await["secret"]
        .as_str()
        .unwrap()
        .to_string();
    let signature = identity_signature(&secret, Some("shop-42"), Some("vera@example.com"));
    let admin = ok_json(app.get("/rest/v1/user", &t).await, StatusCode::OK).await["results"][0]["id"].clone();
    let named = identify(
        &token,
        json!({"externalId": "shop-42", "email": "vera@example.com", "lastName": "Nova", "assignedUser": admin, "identitySignature": signature}),
    )
    .await
    .unwrap();
    let named = ok_json(named, StatusCode::OK).await;
    assert_eq!(named, json!({"customerId": id, "identityVerified": true}));
    let customer = ok_json(app.get(&format!("/rest/v1/customer/{id}"), &t).await, StatusCode::OK).await;
    assert_eq!(customer["firstName"], "Vera");
    assert_eq!(customer["lastName"], "Nova");
    assert_eq!(customer["email"], "vera@example.com");
    assert_eq!(customer["externalId"], "shop-42");
    assert_eq!(customer["assignedUser"], Value::Null, "a visitor cannot assign itself");

    // Another visitor saying it is shop-42, unsigned, only claims it.
    let (other_id, other) = app.widget_visitor(&key, "Vera").await;
    let claimed = identify(&other, json!({"externalId": "shop-42"})).await.unwrap();
    assert_eq!(
        ok_json(claimed, StatusCode::OK).await,
        json!({"customerId": other_id, "identityVerified": false})
    );
}

/// Settings → Workspace shows the snippet to paste, with this server's public
/// URL and the workspace's key.
async fn admins_copy_the_snippet_from_the_workspace_page(db: TestDb) {
    let app = TestApp::start(db).await;
    let (tenant, t) = app.tenant_with_key("Snippets").await;
    let key = app.widget_key(&t).await;
    app.user(&tenant, "admin@example.com", Role::Admin, false).await;
    let admin = session(&app, "admin@example.com").await;
    let html = page(&app, "/settings/workspace", &admin).await.text().await.unwrap();
    let snippet = format!(
        "&lt;script async src=&quot;http://rapport.test/visitor/loader.js&quot; data-rapport-key=&quot;{key}&quot;&gt;&lt;/script&gt;"
    );
    assert!(html.contains(&snippet), "the snippet is on the page");
}

async fn the_demo_shop_embeds_the_script_on_its_own_origin(db: TestDb) {
    let site = tempfile_dir();
    std::fs::create_dir_all(site.join("demo")).unwrap();
    std::fs::write(
        site.join("demo/index.html"),
        r#"<script async src="{{RAPPORT_ORIGIN}}/visitor/loader.js" data-rapport-key="{{WIDGET_KEY}}"></script>"#,
    )
    .unwrap();
    std::fs::write(site.join("secret.txt"), "not for the demo").unwrap();
    let app = TestApp::start(db).await;
    let (shop, _) = app.tenant_with_key("Shop").await;
    let key = app.services.widget_key(&shop).await.unwrap();
    let addr = rapport_server::demo::serve(
        "127.0.0.1:0".parse().unwrap(),
        app.services.clone(),
        site.clone(),
        "http://rapport.test/".into(),
        shop.into_string(),
        std::future::pending(),
    )
    .await
    .unwrap();
    let base = format!("http://{addr}");
    let home = reqwest::get(&base).await.unwrap();
    assert_eq!(home.status(), StatusCode::OK);
    assert_eq!(home.headers()["content-type"], "text/html; charset=utf-8");
    assert_eq!(
        home.text().await.unwrap(),
        format!(r#"<script async src="http://rapport.test/visitor/loader.js" data-rapport-key="{key}"></script>"#)
    );
    for outside in ["/../secret.txt", "/%2e%2e/secret.txt", "/missing.html"] {
        let refused = reqwest::get(format!("{base}{outside}")).await.unwrap();
        assert_eq!(refused.status(), StatusCode::NOT_FOUND, "{outside}");
    }
    let _ = std::fs::remove_dir_all(site);
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("rapport-demo-{}", uuid::Uuid::now_v7().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

backend_tests!(
    admins_copy_the_snippet_from_the_workspace_page,
    the_widget_knows_when_the_workspace_is_open,
    the_script_names_its_visitor,
    the_demo_shop_embeds_the_script_on_its_own_origin,
);
