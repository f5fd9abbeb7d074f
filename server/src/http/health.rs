//! `GET /health` (the process answers) and `GET /ready` (the database answers too).

use axum::{extract::State, http::StatusCode, Json};
use serde_json::{json, Value};

use crate::state::AppState;

/// Liveness: always 200 while the process serves requests.
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Readiness: 200 when the database answers, 503 otherwise. Also says whether
/// co-browsing works here (it needs Chromium), which does not make the
/// instance unready: everything else works without it.
pub async fn ready(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    let cobrowsing = match state.cobrowsing.unavailable() {
        None => json!({
            "available": true,
            "sessions": state.cobrowsing.running(),
            "maxSessions": state.cobrowsing.settings().max_sessions,
        }),
        Some(reason) => json!({ "available": false, "reason": reason }),
    };
    match state.services.db().ping().await {
        Ok(()) => (
            StatusCode::OK,
            Json(json!({ "status": "ready", "cobrowsing": cobrowsing })),
        ),
        Err(err) => {
            tracing::warn!(error = %err, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "reason": "database" })),
            )
        }
    }
}
