//! `/user`: dashboard users (spec 2.6). Passwords are write-only.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::ids::UserId;
use rapport_core::{
    model::{Page, PageRequest},
    users::{User, UserIn},
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, ConflictError, InputErrors, NotFoundError},
        extract::{ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_users, create_user))
        .routes(routes!(get_user, update_user, delete_user))
}

/// Paging and search of the user list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct UserQuery {
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Matches e-mail or display name.
    search: Option<String>,
}

/// List users by e-mail.
#[utoipa::path(get, path = "/user", tag = "user", params(UserQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<User>), AuthErrors, InputErrors))]
async fn list_users(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<UserQuery>,
) -> ApiResult<Json<Page<User>>> {
    let page = PageRequest {
        page_number: q.page_number,
        page_size: q.page_size,
        offset: q.offset,
    };
    Ok(Json(
        state
            .services
            .list_users(&auth.tenant_id, q.search.as_deref(), &page)
            .await?,
    ))
}

/// Create a user, or override an existing one by `id`. A duplicate `email` or
/// `externalId` is a 409 naming the field. A user with platform rights (who
/// manages every tenant) is overridden only by a platform admin: a tenant key
/// gets 403 `platform_admin_protected`.
#[utoipa::path(post, path = "/user", tag = "user", request_body = UserIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = User, description = "Created"), (status = 200, body = User, description = "Overridden"),
        AuthErrors, InputErrors, NotFoundError, ConflictError))]
async fn create_user(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<UserIn>,
) -> ApiResult<(StatusCode, Json<User>)> {
    let status = if input.id.is_some() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        Json(state.services.save_user(&auth.tenant_id, input, &auth.actor).await?),
    ))
}

/// Get a user.
#[utoipa::path(get, path = "/user/{id}", tag = "user", params(("id" = String, Path, description = "User id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = User), AuthErrors, NotFoundError))]
async fn get_user(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<UserId>) -> ApiResult<Json<User>> {
    Ok(Json(state.services.get_user(&auth.tenant_id, &id).await?))
}

/// Replace a user's fields; an omitted `password` keeps the current one. A user
/// with platform rights (who manages every tenant) is changed only by a
/// platform admin: a tenant key gets 403 `platform_admin_protected`.
#[utoipa::path(put, path = "/user/{id}", tag = "user", params(("id" = String, Path, description = "User id")),
    request_body = UserIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = User), AuthErrors, InputErrors, NotFoundError, ConflictError))]
async fn update_user(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<UserId>,
    ApiJson(input): ApiJson<UserIn>,
) -> ApiResult<Json<User>> {
    Ok(Json(
        state
            .services
            .update_user(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Delete a user: sessions end, team memberships and assignments are removed.
/// The tenant's last admin cannot be deleted (409). A user with platform
/// rights is deleted only by a platform admin: a tenant key gets 403
/// `platform_admin_protected`.
#[utoipa::path(delete, path = "/user/{id}", tag = "user", params(("id" = String, Path, description = "User id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError, ConflictError))]
async fn delete_user(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<UserId>) -> ApiResult<StatusCode> {
    state.services.delete_user(&auth.tenant_id, &id, &auth.actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
