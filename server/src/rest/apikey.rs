//! `/apikey`: a tenant's API keys, managed with a tenant API key (the dashboard's
//! Settings → Developer tools → API keys does the same with a session).

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::model::{ApiKey, CreatedApiKey, Page, PageRequest};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors, NotFoundError},
        extract::{ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_keys, create_key))
        .routes(routes!(get_key, revoke_key))
}

/// A new API key.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
pub struct ApiKeyIn {
    /// What the key is for (required, at most 100 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 100, pattern = r"\S")]
    pub name: Option<String>,
}

/// List the tenant's API keys, newest first, revoked ones included.
#[utoipa::path(get, path = "/apikey", tag = "apikey", params(PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<ApiKey>), AuthErrors, InputErrors))]
async fn list_keys(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<ApiKey>>> {
    Ok(Json(state.services.list_api_keys(&auth.tenant_id, &page).await?))
}

/// Create an API key. The token is in this answer only.
#[utoipa::path(post, path = "/apikey", tag = "apikey", request_body = ApiKeyIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = CreatedApiKey), AuthErrors, InputErrors))]
async fn create_key(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<ApiKeyIn>,
) -> ApiResult<(StatusCode, Json<CreatedApiKey>)> {
    let created = state
        .services
        .create_api_key(&auth.tenant_id, input.name.as_deref().unwrap_or_default(), &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// Get one API key (never its token).
#[utoipa::path(get, path = "/apikey/{id}", tag = "apikey", params(("id" = String, Path, description = "Key id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = ApiKey), AuthErrors, NotFoundError))]
async fn get_key(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<ApiKey>> {
    Ok(Json(state.services.get_api_key(&auth.tenant_id, &id).await?))
}

/// Revoke an API key; it authenticates nothing from now on.
#[utoipa::path(delete, path = "/apikey/{id}", tag = "apikey", params(("id" = String, Path, description = "Key id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = ApiKey, description = "The revoked key"), AuthErrors, NotFoundError))]
async fn revoke_key(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<ApiKey>> {
    Ok(Json(
        state.services.revoke_api_key(&auth.tenant_id, &id, &auth.actor).await?,
    ))
}
