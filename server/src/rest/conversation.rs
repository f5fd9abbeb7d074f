//! `/conversation` and `/message`: conversation status (spec 2.2, 3), sending to a
//! customer (spec 2.3), messages that channel integrations receive, and history.

use axum::{
    extract::{FromRequest, FromRequestParts, Path, Request, State},
    http::StatusCode,
    Json,
};
use rapport_core::ids::CustomerId;
use rapport_core::{
    appointments::calls::StartedCall,
    conversations::{
        AgentTypingIn, Channel, Conversation, ConversationFilter, ConversationStatus, Message, MessageIn, MessageType,
        ReadIn, ReadState, Reader, StatusIn,
    },
    model::{Page, PageRequest},
    FieldError,
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiError, ApiResult, AuthErrors, InputErrors, NotFoundError},
        extract::{body_bytes, media_type, ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_conversations))
        .routes(routes!(get_conversation))
        .routes(routes!(set_status))
        .routes(routes!(start_call))
        .routes(routes!(typing))
        .routes(routes!(mark_read))
        .routes(routes!(send_message))
        .routes(routes!(receive_message))
        .routes(routes!(list_messages))
}

/// Paging and the status filter of the conversation list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct ConversationQuery {
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Only conversations with this status.
    status: Option<ConversationStatus>,
}

/// List conversations (one per customer), most recently active first.
#[utoipa::path(get, path = "/conversation", tag = "conversation", params(ConversationQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Conversation>), AuthErrors, InputErrors))]
async fn list_conversations(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<ConversationQuery>,
) -> ApiResult<Json<Page<Conversation>>> {
    let page = PageRequest {
        page_number: q.page_number,
        page_size: q.page_size,
        offset: q.offset,
    };
    let filter = ConversationFilter { status: q.status };
    Ok(Json(
        state
            .services
            .list_conversations(&auth.tenant_id, &filter, &page)
            .await?,
    ))
}

/// Get a customer's conversation (the Conversation object of spec 2.2).
#[utoipa::path(get, path = "/conversation/{customerId}", tag = "conversation",
    params(("customerId" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Conversation), AuthErrors, NotFoundError))]
async fn get_conversation(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
) -> ApiResult<Json<Conversation>> {
    Ok(Json(
        state.services.get_conversation(&auth.tenant_id, &customer_id).await?,
    ))
}

/// Set a conversation's status. Setting the status it already has changes nothing
/// and fires no webhook; `DONE` → `UNREAD` also fires `conversation.created`.
#[utoipa::path(put, path = "/conversation/{customerId}/status", tag = "conversation", request_body = StatusIn,
    params(("customerId" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Conversation), AuthErrors, InputErrors, NotFoundError))]
async fn set_status(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
    ApiJson(input): ApiJson<StatusIn>,
) -> ApiResult<Json<Conversation>> {
    Ok(Json(
        state
            .services
            .set_conversation_status(&auth.tenant_id, &customer_id, input, &auth.actor)
            .await?,
    ))
}

/// Start a video call with the customer: an appointment that opens now (its
/// link works until two hours after its planned 30 minutes), belonging to the
/// customer, and a `CARD` message inviting them (*Join the video call*, whose
/// `buttonLink` is the appointment's `joinLink`), which fires `message.sent`.
/// The customer joins without a waiting room; the tenant's signed-in agents
/// host it.
#[utoipa::path(post, path = "/conversation/{customerId}/call", tag = "conversation",
    params(("customerId" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = StartedCall), AuthErrors, NotFoundError))]
async fn start_call(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
) -> ApiResult<(StatusCode, Json<StartedCall>)> {
    let call = state
        .services
        .start_call(&auth.tenant_id, &customer_id, None, false, Channel::Api, &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(call)))
}

/// An integration is typing a reply to the customer (`typing: true`, repeated
/// every few seconds while it goes on), or stopped (`false`). The visitor's
/// chat shows "`name` is typing…" (without a name, that someone is), and so
/// does the inbox; both forget it 6 seconds after the last signal. Nothing is
/// stored.
#[utoipa::path(post, path = "/conversation/{customerId}/typing", tag = "conversation", request_body = AgentTypingIn,
    params(("customerId" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Told to the visitor and the agents"), AuthErrors, InputErrors, NotFoundError))]
async fn typing(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
    ApiJson(input): ApiJson<AgentTypingIn>,
) -> ApiResult<StatusCode> {
    state
        .services
        .agent_typing(&auth.tenant_id, &customer_id, None, &input)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The agents' side has read the conversation up to `messageId` (a message of
/// it): the visitor's chat shows "Seen" under their messages up to it, and the
/// Conversation object's `agentReadAt` moves there. A mark never moves back; a
/// message of another conversation is 422 `unknown_reference`. The dashboard
/// marks a conversation read when an agent has it open on screen.
#[utoipa::path(post, path = "/conversation/{customerId}/read", tag = "conversation", request_body = ReadIn,
    params(("customerId" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = ReadState), AuthErrors, InputErrors, NotFoundError))]
async fn mark_read(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
    ApiJson(input): ApiJson<ReadIn>,
) -> ApiResult<Json<ReadState>> {
    Ok(Json(
        state
            .services
            .mark_read(&auth.tenant_id, &customer_id, Reader::Agent, &input)
            .await?,
    ))
}

/// The fields of a message sent as a `text/plain` body, whose text is the body.
/// Read only with such a body: a JSON body carries them itself.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct TextMessageQuery {
    /// With a `text/plain` body, required: the customer's id, or its `externalId`
    /// when `isExternalId` is true.
    customer_id: Option<String>,
    /// With a `text/plain` body, required: whether `customerId` is an external id.
    is_external_id: Option<bool>,
    /// With a `text/plain` body: the message's type, `MESSAGE` when absent.
    #[serde(rename = "type")]
    #[param(rename = "type")]
    kind: Option<MessageType>,
    /// With a `text/plain` body: the `url` of an `AUDIO`, `VIDEO` or `FILE` message.
    url: Option<String>,
    /// With a `text/plain` body: the `buttonLink` of a `CARD`.
    button_link: Option<String>,
    /// With a `text/plain` body: the `buttonText` of a `CARD`.
    button_text: Option<String>,
}

/// A message's body: a JSON [`MessageIn`], or (as the spec states, "the request
/// body is used as the message text") the text itself as `text/plain`, UTF-8,
/// with the other fields as query parameters ([`TextMessageQuery`]). Either way
/// the same rules then check it.
struct MessageBody(MessageIn);

impl FromRequest<AppState> for MessageBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, ApiError> {
        if media_type(req.headers()).as_deref() != Some("text/plain") {
            let ApiJson(input) = ApiJson::<MessageIn>::from_request(req, state).await?;
            return Ok(MessageBody(input));
        }
        let (mut parts, body) = req.into_parts();
        let ApiQuery(query) = ApiQuery::<TextMessageQuery>::from_request_parts(&mut parts, state).await?;
        let bytes = body_bytes(Request::from_parts(parts, body), state).await?;
        let text = String::from_utf8(bytes.to_vec()).map_err(|_| {
            ApiError::validation(vec![FieldError::new(
                "message",
                "invalid_value",
                "a text/plain body must be UTF-8",
            )])
        })?;
        Ok(MessageBody(MessageIn {
            customer_id: query.customer_id,
            is_external_id: query.is_external_id,
            kind: Some(query.kind.unwrap_or(MessageType::Message)),
            message: (!text.is_empty()).then_some(text),
            url: query.url,
            button_link: query.button_link,
            button_text: query.button_text,
        }))
    }
}

/// Send a message to a customer (spec 2.3). `MESSAGE` needs `message`; `AUDIO`,
/// `VIDEO` and `FILE` need an http(s) `url`; `CARD` needs `buttonText` and
/// `buttonLink`. An `UNREAD` conversation becomes `UNRESOLVED`. The message reaches
/// the customer's open widget at once, or waits until the widget comes back.
///
/// The body is the JSON message, or, as `text/plain` (UTF-8), the message's text
/// itself, with `customerId`, `isExternalId` and the other fields as query
/// parameters (`type` is then `MESSAGE` unless given).
#[utoipa::path(post, path = "/message", tag = "conversation",
    request_body(
        description = "The message as JSON, or its text as `text/plain` with the other fields as query parameters.",
        content((MessageIn = "application/json"), (String = "text/plain")),
    ),
    params(TextMessageQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = Message), AuthErrors, InputErrors, NotFoundError))]
async fn send_message(
    auth: TenantAuth,
    State(state): State<AppState>,
    MessageBody(input): MessageBody,
) -> ApiResult<(StatusCode, Json<Message>)> {
    let message = state
        .services
        .send_message(&auth.tenant_id, input, Channel::Api, &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(message)))
}

/// Record a message a channel integration received from a customer. Same shape and
/// rules as sending; with `isExternalId`, an unknown external id creates the
/// customer. The conversation becomes `UNREAD` and `message.received` fires.
#[utoipa::path(post, path = "/message/inbound", tag = "conversation", request_body = MessageIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = Message), AuthErrors, InputErrors, NotFoundError))]
async fn receive_message(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<MessageIn>,
) -> ApiResult<(StatusCode, Json<Message>)> {
    let message = state
        .services
        .receive_message(&auth.tenant_id, input, &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(message)))
}

/// A customer's messages, both directions, newest first.
#[utoipa::path(get, path = "/customer/{id}/message", tag = "conversation",
    params(("id" = String, Path, description = "Customer id"), PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Message>), AuthErrors, InputErrors, NotFoundError))]
async fn list_messages(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Message>>> {
    Ok(Json(
        state
            .services
            .list_messages(&auth.tenant_id, &customer_id, &page)
            .await?,
    ))
}
