//! `/team`: teams (spec 2.7). Members must be users of the tenant.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    ids::TeamId,
    model::{Page, PageRequest},
    teams::{Team, TeamIn},
};
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
        .routes(routes!(list_teams, create_team))
        .routes(routes!(get_team, update_team, delete_team))
}

/// List teams by name.
#[utoipa::path(get, path = "/team", tag = "team", params(PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Team>), AuthErrors, InputErrors))]
async fn list_teams(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Team>>> {
    Ok(Json(state.services.list_teams(&auth.tenant_id, &page).await?))
}

/// Create a team, or override an existing one by `id`.
#[utoipa::path(post, path = "/team", tag = "team", request_body = TeamIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = Team, description = "Created"), (status = 200, body = Team, description = "Overridden"),
        AuthErrors, InputErrors, NotFoundError))]
async fn create_team(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<TeamIn>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    let status = if input.id.is_some() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        Json(state.services.save_team(&auth.tenant_id, input, &auth.actor).await?),
    ))
}

/// Get a team.
#[utoipa::path(get, path = "/team/{id}", tag = "team", params(("id" = String, Path, description = "Team id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Team), AuthErrors, NotFoundError))]
async fn get_team(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<TeamId>) -> ApiResult<Json<Team>> {
    Ok(Json(state.services.get_team(&auth.tenant_id, &id).await?))
}

/// Replace a team's name, members and tags.
#[utoipa::path(put, path = "/team/{id}", tag = "team", params(("id" = String, Path, description = "Team id")),
    request_body = TeamIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Team), AuthErrors, InputErrors, NotFoundError))]
async fn update_team(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<TeamId>,
    ApiJson(input): ApiJson<TeamIn>,
) -> ApiResult<Json<Team>> {
    Ok(Json(
        state
            .services
            .update_team(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Delete a team; customers assigned to it become unassigned.
#[utoipa::path(delete, path = "/team/{id}", tag = "team", params(("id" = String, Path, description = "Team id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError))]
async fn delete_team(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<TeamId>) -> ApiResult<StatusCode> {
    state.services.delete_team(&auth.tenant_id, &id, &auth.actor).await?;
    Ok(StatusCode::NO_CONTENT)
}
