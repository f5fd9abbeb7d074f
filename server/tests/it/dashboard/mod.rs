//! The dashboard over HTTP: sign-in and sign-out, cookies, role checks on pages and
//! server functions, and cross-site protection. (Clicking through it in Chromium is
//! in end2end/.)
//!
//! Here are the helpers the other test modules sign in and call the dashboard
//! with; the tests are in `access` (sign-in, roles, cross-site posts),
//! `server_functions` (webhooks, presence) and `pages` (the bundle, resources,
//! scripts).

mod access;
mod pages;
mod server_functions;

use rapport_core::{ids::TenantId, model::Role};
use reqwest::{header, Method, Response, StatusCode};

use crate::utils::TestApp;

pub(crate) async fn login(app: &TestApp, email: &str, password: &str) -> Response {
    app.request(Method::POST, "/auth/login")
        .form(&[
            ("email", email),
            ("password", password),
            ("workspace", ""),
            ("next", "/"),
        ])
        .send()
        .await
        .unwrap()
}

/// Signs in and returns the `name=value` session cookie.
pub(crate) async fn session(app: &TestApp, email: &str) -> String {
    let response = login(app, email, "password-123").await;
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let set_cookie = response.headers()[header::SET_COOKIE].to_str().unwrap().to_string();
    set_cookie.split(';').next().unwrap().to_string()
}

/// Who a settings test signs in as: in tenant Alpha (with an API key) an
/// admin and a supervisor, and Beta's admin, the stranger for whom every one
/// of Alpha's ids must be unknown. Tests add the agents they need.
pub(crate) struct Cast {
    pub alpha: TenantId,
    pub key: String,
    pub beta: TenantId,
    pub admin_id: rapport_core::ids::UserId,
    pub stranger_id: rapport_core::ids::UserId,
    pub admin: String,
    pub supervisor: String,
    pub stranger: String,
}

impl Cast {
    /// Creates the two tenants and signs the three in.
    pub(crate) async fn new(app: &TestApp) -> Cast {
        let (alpha, key) = app.tenant_with_key("Alpha").await;
        let (beta, _) = app.tenant_with_key("Beta").await;
        let admin_id = app.user(&alpha, "admin@alpha.example", Role::Admin, false).await;
        app.user(&alpha, "super@alpha.example", Role::Supervisor, false).await;
        let stranger_id = app.user(&beta, "admin@beta.example", Role::Admin, false).await;
        Cast {
            admin: session(app, "admin@alpha.example").await,
            supervisor: session(app, "super@alpha.example").await,
            stranger: session(app, "admin@beta.example").await,
            alpha,
            key,
            beta,
            admin_id,
            stranger_id,
        }
    }
}

/// A page load as a browser makes it (browsers accept `text/html`).
pub(crate) async fn page(app: &TestApp, path: &str, cookie: &str) -> Response {
    app.request(Method::GET, path)
        .header(header::COOKIE, cookie)
        .header(header::ACCEPT, "text/html,application/xhtml+xml")
        .send()
        .await
        .unwrap()
}

pub(crate) async fn server_fn(app: &TestApp, name: &str, cookie: &str, form: &[(&str, &str)]) -> Response {
    app.request(Method::POST, &format!("/api/{name}"))
        .header(header::COOKIE, cookie)
        .form(form)
        .send()
        .await
        .unwrap()
}

/// Calls server function `name` as `cookie` with `form`, asserts 200, and
/// returns its JSON answer (`Null` when it answers nothing).
pub(crate) async fn server_fn_ok(app: &TestApp, name: &str, cookie: &str, form: &[(&str, &str)]) -> serde_json::Value {
    let response = server_fn(app, name, cookie, form).await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{name}: {text}");
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}
