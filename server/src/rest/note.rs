//! `/customer/{id}/note`: private notes in a conversation (our extension; see
//! `rapport_core::conversations::notes`). Only the tenant's agents and keys
//! read them: never the visitor, never a `message.*` webhook.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    conversations::{Note, NoteIn},
    model::{Page, PageRequest},
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
    OpenApiRouter::new().routes(routes!(list_notes, add_note))
}

/// List the notes in a customer's conversation, newest first. A customer of
/// another workspace has none.
#[utoipa::path(get, path = "/customer/{id}/note", tag = "customer",
    params(("id" = String, Path, description = "Customer id"), PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Note>), AuthErrors, InputErrors))]
async fn list_notes(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<rapport_core::ids::CustomerId>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Note>>> {
    Ok(Json(state.services.list_notes(&auth.tenant_id, &id, &page).await?))
}

/// Write a private note in a customer's conversation, by the API key. `@`
/// and a user's e-mail address (or the part before its `@`, when no other user
/// shares it) notifies that user in the dashboard. Queues `note.created`; it is
/// no answer, so no SLA clock stops.
#[utoipa::path(post, path = "/customer/{id}/note", tag = "customer", request_body = NoteIn,
    params(("id" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = Note, description = "Written"), AuthErrors, InputErrors, NotFoundError))]
async fn add_note(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<rapport_core::ids::CustomerId>,
    ApiJson(input): ApiJson<NoteIn>,
) -> ApiResult<(StatusCode, Json<Note>)> {
    let note = state
        .services
        .add_note(&auth.tenant_id, &id, &input, &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(note)))
}
