//! `GET /health` (the process answers) and `GET /ready` (the database answers too).

use axum::{extract::State, http::StatusCode, Json};
use serde_json::{json, Value};

use crate::state::AppState;

/// Liveness: always 200 while the process serves requests.
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

/// Readiness: 200 when the database answers, 503 otherwise.
pub async fn ready(State(state): State<AppState>) -> (StatusCode, Json<Value>) {
    match state.services.db().ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({ "status": "ready" }))),
        Err(err) => {
            tracing::warn!(error = %err, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "reason": "database" })),
            )
        }
    }
}
