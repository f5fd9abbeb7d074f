//! After a chat: the visitor rates the conversation and asks for its
//! transcript by mail.

use axum::{extract::State, http::StatusCode, Json};
use rapport_core::conversations::{Csat, CsatIn, CsatPrompt, TranscriptIn, TranscriptQueued};

use super::Visitor;
use crate::{
    http::{
        error::{ApiResult, AuthErrors, ConflictError, InputErrors},
        extract::ApiJson,
    },
    state::AppState,
};

/// Whether to ask the visitor to rate their conversation now: true once it is
/// closed (`DONE`), when the workspace asks for ratings (`csatEnabled`) and the
/// closing has none yet. The socket and stream say `conversation` when the
/// status changes, for the page to ask again.
#[utoipa::path(get, path = "/widget/csat", tag = "widget",
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, body = CsatPrompt), AuthErrors))]
pub(super) async fn csat_prompt(visitor: Visitor, State(state): State<AppState>) -> ApiResult<Json<CsatPrompt>> {
    Ok(Json(
        state
            .services
            .csat_prompt(&visitor.tenant_id, &visitor.customer_id)
            .await?,
    ))
}

/// The visitor rates their closed conversation: `rating` 1–5 and an optional
/// `comment` (at most 1,000 characters). One rating per closing: 409
/// `already_rated` after the first, `conversation_open` before it is closed,
/// `csat_disabled` when the workspace does not ask. The rating shows on the
/// Conversation object (`csat`), counts in the chat report (`CSAT_RESPONSES`,
/// `CSAT_AVERAGE`) and fires `csat.submitted`.
#[utoipa::path(post, path = "/widget/csat", tag = "widget", request_body = CsatIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 201, body = Csat), AuthErrors, InputErrors, ConflictError))]
pub(super) async fn rate(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<CsatIn>,
) -> ApiResult<(StatusCode, Json<Csat>)> {
    let csat = state
        .services
        .submit_csat(&visitor.tenant_id, &visitor.customer_id, &input, &visitor.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(csat)))
}

/// The visitor asks for their conversation by mail, to `email`. It goes through the outbox like every mail (and waits there on a
/// server without SMTP). At most one every 10 minutes per customer: sooner, 429
/// `transcript_too_soon` with `Retry-After`; and it counts against the
/// workspace's mails per day (429 `mail_allowance_spent`).
#[utoipa::path(post, path = "/widget/transcript", tag = "widget", request_body = TranscriptIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 202, body = TranscriptQueued), AuthErrors, InputErrors))]
pub(super) async fn transcript(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<TranscriptIn>,
) -> ApiResult<(StatusCode, Json<TranscriptQueued>)> {
    let queued = state
        .services
        .mail_transcript(&visitor.tenant_id, &visitor.customer_id, &input, &visitor.actor)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(queued)))
}
