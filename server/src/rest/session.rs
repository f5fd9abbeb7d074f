//! `/session`: recorded visitor sessions (spec 2.14) and their ingestion.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    model::Page,
    sessions::{RecordedSession, RecordedSessionIn, RecordedSessionsQuery},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors, NotFoundError},
        extract::{ApiJson, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_recorded))
        .routes(routes!(record_session))
        .routes(routes!(get_session, delete_session))
}

/// List recorded sessions, newest first. `tagFilter.tagsFilter` keeps sessions that
/// carry **every** listed tag.
#[utoipa::path(post, path = "/session/recorded", tag = "session", request_body = RecordedSessionsQuery,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<RecordedSession>), AuthErrors, InputErrors))]
async fn list_recorded(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(query): ApiJson<RecordedSessionsQuery>,
) -> ApiResult<Json<Page<RecordedSession>>> {
    Ok(Json(
        state.services.list_recorded_sessions(&auth.tenant_id, &query).await?,
    ))
}

/// Record a session, or update it by `id` (ingestion for recorders and integrations).
#[utoipa::path(post, path = "/session", tag = "session", request_body = RecordedSessionIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = RecordedSession), AuthErrors, InputErrors))]
async fn record_session(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<RecordedSessionIn>,
) -> ApiResult<Json<RecordedSession>> {
    Ok(Json(
        state
            .services
            .record_session(&auth.tenant_id, input, &auth.actor)
            .await?,
    ))
}

/// Get a recorded session.
#[utoipa::path(get, path = "/session/{id}", tag = "session", params(("id" = String, Path, description = "Session id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = RecordedSession), AuthErrors, NotFoundError))]
async fn get_session(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<RecordedSession>> {
    Ok(Json(state.services.get_recorded_session(&auth.tenant_id, &id).await?))
}

/// Delete a recorded session: its events, tags, co-browses and live-view
/// links. Reports keep its numbers without its id.
#[utoipa::path(delete, path = "/session/{id}", tag = "session", params(("id" = String, Path, description = "Session id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError))]
async fn delete_session(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    state
        .services
        .delete_recorded_session(&auth.tenant_id, &id, &auth.actor)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
