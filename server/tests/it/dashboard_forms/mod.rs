//! The dashboard's settings and agent tools over HTTP: webhook editing and replay,
//! link generation, field-level validation messages, the no-JavaScript flash of
//! generated secrets, roles and tenant isolation. (Clicking through them in
//! Chromium is in end2end/.)
//!
//! The parts: `webhooks`, `links`, `users`, `opening_hours`, `workspace` (with
//! the audit log).

mod links;
mod opening_hours;
mod users;
mod webhooks;
mod workspace;

use reqwest::StatusCode;
use serde_json::Value;

use crate::{dashboard::server_fn, utils::TestApp};

async fn json_of(response: reqwest::Response) -> Value {
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{text}");
    serde_json::from_str(&text).unwrap()
}

/// Asserts that every server function in `names`, called by `cookie` with
/// `form`, is refused with `status` (403 for a role too low, 404 for another
/// tenant's ids).
async fn assert_refused(app: &TestApp, names: &[&str], cookie: &str, form: &[(&str, &str)], status: StatusCode) {
    for name in names {
        assert_eq!(server_fn(app, name, cookie, form).await.status(), status, "{name}");
    }
}
