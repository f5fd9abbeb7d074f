//! Session recording over HTTP, on both backends: the visitor script starts a
//! recording and appends batches (plain or gzip, a retry stored once) that only
//! its write token may append; the replay reads them back in order; the
//! workspace's settings switch recording off and say what to mask; a live
//! viewer makes the script's control stream ask for a snapshot and hears each
//! batch as it is stored, through another instance too; retention deletes old
//! recordings.
//!
//! The script's recording from start to replay, with the workspace's settings
//! and retention (`lifecycle`); live viewers (`live_view`); quiet sessions
//! ending with their reason (`endings`); the per-session and per-day bounds
//! (`bounds`).

mod bounds;
mod endings;
mod lifecycle;
mod live_view;

use std::time::Duration;

use rapport_core::recordings::gzip;
use reqwest::{header, Method, StatusCode};
use serde_json::Value;

use crate::utils::{ok_json, TestApp};

const WAIT: Duration = Duration::from_secs(20);

/// Starts a recording: `(session id, write token)`.
async fn start(app: &TestApp, key: &str, body: Value) -> (String, String) {
    let started = app
        .request(Method::POST, "/rest/v1/widget/recording")
        .header("rapport-widget-key", key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let started = ok_json(started, StatusCode::CREATED).await;
    assert_eq!(started["watched"], false);
    (
        started["sessionId"].as_str().unwrap().to_string(),
        started["writeToken"].as_str().unwrap().to_string(),
    )
}

/// Appends a batch, gzip-compressed or not.
async fn append(app: &TestApp, key: &str, id: &str, token: &str, body: &Value, compressed: bool) -> reqwest::Response {
    let json = serde_json::to_vec(body).unwrap();
    let mut request = app
        .request(Method::POST, &format!("/rest/v1/widget/recording/{id}/events"))
        .header("rapport-widget-key", key)
        .header(header::CONTENT_TYPE, "application/json")
        .bearer_auth(token);
    request = if compressed {
        request
            .header(header::CONTENT_ENCODING, "gzip")
            .body(gzip(&json).unwrap())
    } else {
        request.body(json)
    };
    request.send().await.unwrap()
}
