//! What the visitor's side of a conversation says besides messages: that the
//! visitor is typing (and, where the workspace shows drafts, what), and how
//! far they have read. The agents' side of both is in `rest/conversation.rs`;
//! the socket and stream of [`super::live`] carry the agents' to the page.

use axum::{extract::State, http::StatusCode, Json};
use rapport_core::conversations::{ReadIn, ReadState, Reader, VisitorTypingIn};

use super::Visitor;
use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors},
        extract::ApiJson,
    },
    state::AppState,
};

/// The visitor types (`typing: true`, repeated while they go on: the script
/// sends at most one every 1.5 s) or stopped (`false`, also once they send).
/// The agents' inbox shows it, with `draft` (at most 500 characters, the end
/// of what is typed) unless the workspace's `typingPreview` is off. Nothing is
/// stored; agents forget a signal after 6 seconds without another.
#[utoipa::path(post, path = "/widget/typing", tag = "widget", request_body = VisitorTypingIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 204, description = "Told to the agents"), AuthErrors, InputErrors))]
pub(super) async fn typing(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<VisitorTypingIn>,
) -> ApiResult<StatusCode> {
    state
        .services
        .visitor_typing(&visitor.tenant_id, &visitor.customer_id, &input)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// How far each side of the visitor's conversation has read: the page shows
/// "Seen" under the visitor's messages created up to `agentReadAt`. The socket
/// and stream say `read` when an agent reads further.
#[utoipa::path(get, path = "/widget/read", tag = "widget",
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, body = ReadState), AuthErrors))]
pub(super) async fn read_state(visitor: Visitor, State(state): State<AppState>) -> ApiResult<Json<ReadState>> {
    Ok(Json(
        state
            .services
            .read_state(&visitor.tenant_id, &visitor.customer_id)
            .await?,
    ))
}

/// The visitor has seen the conversation up to `messageId` (the newest
/// message their open, shown chat displays): agents see "Seen" on their
/// messages up to it. A mark never moves back; a message of another
/// conversation is 422 `unknown_reference`.
#[utoipa::path(post, path = "/widget/read", tag = "widget", request_body = ReadIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, body = ReadState), AuthErrors, InputErrors))]
pub(super) async fn mark_read(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<ReadIn>,
) -> ApiResult<Json<ReadState>> {
    Ok(Json(
        state
            .services
            .mark_read(&visitor.tenant_id, &visitor.customer_id, Reader::Visitor, &input)
            .await?,
    ))
}
