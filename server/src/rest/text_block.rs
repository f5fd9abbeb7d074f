//! `/textblock`: text blocks, the answers agents insert with `/shortcut` in the
//! inbox (our extension; see `rapport_core::text_blocks`).

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    model::{Page, PageRequest},
    text_blocks::{Scope, TextBlock, TextBlockFilter, TextBlockIn},
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
        .routes(routes!(list_text_blocks, create_text_block))
        .routes(routes!(get_text_block, update_text_block, delete_text_block))
}

/// Paging and the filters of the text block list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct TextBlockQuery {
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Only blocks whose shortcut starts with this.
    #[param(max_length = 40)]
    shortcut: Option<String>,
    /// Only blocks in this language; empty: only the blocks for every language.
    #[param(max_length = 35)]
    language: Option<String>,
    /// Only blocks shared this way.
    scope: Option<Scope>,
}

/// List text blocks by shortcut and language, with how often each was used.
#[utoipa::path(get, path = "/textblock", tag = "textblock", params(TextBlockQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<TextBlock>), AuthErrors, InputErrors))]
async fn list_text_blocks(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<TextBlockQuery>,
) -> ApiResult<Json<Page<TextBlock>>> {
    let page = PageRequest {
        page_number: q.page_number,
        page_size: q.page_size,
        offset: q.offset,
    };
    let filter = TextBlockFilter {
        shortcut: q.shortcut,
        language: q.language,
        scope: q.scope,
    };
    Ok(Json(
        state.services.list_text_blocks(&auth.tenant_id, &filter, &page).await?,
    ))
}

/// Create a text block. One owner (the workspace, a team, a user) has one block
/// per shortcut and language: another is 409 `shortcut_taken`.
#[utoipa::path(post, path = "/textblock", tag = "textblock", request_body = TextBlockIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = TextBlock, description = "Created"), AuthErrors, InputErrors, ConflictError))]
async fn create_text_block(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<TextBlockIn>,
) -> ApiResult<(StatusCode, Json<TextBlock>)> {
    let block = state
        .services
        .create_text_block(&auth.tenant_id, input, &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(block)))
}

/// Get a text block.
#[utoipa::path(get, path = "/textblock/{id}", tag = "textblock", params(("id" = String, Path, description = "Text block id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = TextBlock), AuthErrors, NotFoundError))]
async fn get_text_block(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<Json<TextBlock>> {
    Ok(Json(state.services.get_text_block(&auth.tenant_id, &id).await?))
}

/// Replace a text block's fields; its use count stays.
#[utoipa::path(put, path = "/textblock/{id}", tag = "textblock", params(("id" = String, Path, description = "Text block id")),
    request_body = TextBlockIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = TextBlock), AuthErrors, InputErrors, NotFoundError, ConflictError))]
async fn update_text_block(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiJson(input): ApiJson<TextBlockIn>,
) -> ApiResult<Json<TextBlock>> {
    Ok(Json(
        state
            .services
            .update_text_block(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Delete a text block. Messages sent from it stay counted in the reports.
#[utoipa::path(delete, path = "/textblock/{id}", tag = "textblock", params(("id" = String, Path, description = "Text block id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError))]
async fn delete_text_block(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> ApiResult<StatusCode> {
    state
        .services
        .delete_text_block(&auth.tenant_id, &id, &auth.actor)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
