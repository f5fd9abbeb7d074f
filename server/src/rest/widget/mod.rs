//! `/widget`: what the visitor widget calls from customers' web pages. It is
//! public, so it authenticates differently from the rest of the API: the page
//! names its tenant with the tenant's widget key (`rapport-widget-key` header, not
//! a secret), and a visitor proves who it is with the visitor token it received
//! when it started (`Authorization: Bearer vt_…`). CORS is open for these paths;
//! the REST rate limits (per IP and per token) apply, and tracking has its own
//! per-tenant event allowance.

use axum::{
    extract::{FromRequestParts, State},
    http::{header, request::Parts, HeaderName, Method, StatusCode},
    Json,
};
use rapport_core::{
    audit::{Actor, ActorKind},
    conversations::{
        FormIn, Message, VisitorIdentity, VisitorIn, VisitorTags, VisitorTagsIn, WidgetConfig, WidgetMessageIn,
    },
    files::FileUpload,
    ids::{CustomerId, TenantId},
    model::{Page, PageRequest},
    reports::ingest::{TrackBatch, TrackResult},
    CoreError,
};
use serde::{Deserialize, Serialize};
use tower_http::cors::{Any, CorsLayer};
use utoipa_axum::{router::OpenApiRouter, routes};

mod closing;
mod identity;
mod live;
mod rules;
mod signals;

use crate::{
    http::{
        client_ip::ClientIp,
        error::{ApiError, ApiResult, AuthErrors, ConflictError, FileErrors, InputErrors},
        extract::{actor, bearer_token, ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

/// The header carrying the tenant's widget key.
pub const WIDGET_KEY_HEADER: &str = "rapport-widget-key";

pub fn router() -> OpenApiRouter<AppState> {
    let public = OpenApiRouter::new()
        .routes(routes!(config))
        .routes(routes!(rules::rules))
        .routes(routes!(start_visitor))
        .routes(routes!(identity::identify))
        .routes(routes!(list_messages, post_message))
        .routes(routes!(post_file))
        .routes(routes!(request_call))
        .routes(routes!(closing::csat_prompt, closing::rate))
        .routes(routes!(closing::transcript))
        .routes(routes!(signals::typing))
        .routes(routes!(signals::read_state, signals::mark_read))
        .routes(routes!(live::stream))
        .routes(routes!(live::socket))
        .routes(routes!(post_form))
        .routes(routes!(add_tags))
        .routes(routes!(track))
        .layer(widget_cors());
    OpenApiRouter::new()
        .routes(routes!(get_key))
        .routes(routes!(rotate_key))
        .routes(routes!(identity::get_identity, identity::put_identity))
        .routes(routes!(identity::rotate_identity_secret))
        .merge(public)
}

/// CORS of the public widget paths: any site may call them, with the widget's
/// headers (`Content-Encoding` for gzip-compressed recording batches).
pub(super) fn widget_cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(Any)
        .allow_methods([Method::GET, Method::POST])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::CONTENT_ENCODING,
            HeaderName::from_static(WIDGET_KEY_HEADER),
        ])
}

/// The tenant's widget key.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct WidgetKey {
    /// Put it in the widget snippet (`rapport-widget-key`). It names the tenant; it
    /// is not a secret.
    widget_key: String,
}

/// A visitor: widget key plus visitor token.
struct Visitor {
    tenant_id: TenantId,
    customer_id: CustomerId,
    /// The visitor token (never logged): identify may move it to another customer.
    token: String,
    actor: Actor,
}

impl FromRequestParts<AppState> for Visitor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = parts
            .headers
            .get(WIDGET_KEY_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| ApiError::unauthorized("missing_widget_key", "send the rapport-widget-key header"))?
            .to_string();
        let token = bearer_token(parts)?.ok_or_else(|| {
            ApiError::unauthorized("missing_visitor_token", "send Authorization: Bearer <visitor token>")
        })?;
        let (tenant_id, customer) = state
            .services
            .visitor(&key, &token)
            .await
            .map_err(|_| ApiError::unauthorized("invalid_visitor", "unknown widget key or visitor token"))?;
        Ok(Visitor {
            tenant_id,
            actor: actor(parts, ActorKind::Customer, &customer.id),
            customer_id: customer.id,
            token,
        })
    }
}

/// The tenant's widget key, for the widget snippet.
#[utoipa::path(get, path = "/widget/key", tag = "widget",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = WidgetKey), AuthErrors))]
async fn get_key(auth: TenantAuth, State(state): State<AppState>) -> ApiResult<Json<WidgetKey>> {
    Ok(Json(WidgetKey {
        widget_key: state.services.widget_key(&auth.tenant_id).await?,
    }))
}

/// Replace the widget key; pages with the old one stop working at once.
#[utoipa::path(post, path = "/widget/key/rotate", tag = "widget",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = WidgetKey), AuthErrors))]
async fn rotate_key(auth: TenantAuth, State(state): State<AppState>) -> ApiResult<Json<WidgetKey>> {
    Ok(Json(WidgetKey {
        widget_key: state.services.rotate_widget_key(&auth.tenant_id, &auth.actor).await?,
    }))
}

/// Start a visitor (widget): creates its customer, which fires `customer.created`
/// and `conversation.created`, and returns the visitor token, shown only here.
/// `pageUrl` and `language` say where the visitor is, for routing rules. A
/// workspace's pages start at most `visitorsPerMinute` visitors a minute (`GET
/// /tenant/{id}/limits`); past it, 429 `visitor_allowance_spent` with
/// `Retry-After`. `externalId` and `email` count only when signed, as for
/// `POST /widget/profile`; a signed `externalId` of a customer the workspace
/// has gives a token of that customer (the same person on another device), and
/// no customer is created.
#[utoipa::path(post, path = "/widget/visitor", tag = "widget", request_body = VisitorIn,
    security(("widgetKey" = [])),
    responses((status = 201, body = VisitorIdentity), AuthErrors, InputErrors, ConflictError))]
async fn start_visitor(
    State(state): State<AppState>,
    parts: AnonymousVisitor,
    ApiJson(profile): ApiJson<VisitorIn>,
) -> ApiResult<(StatusCode, Json<VisitorIdentity>)> {
    let (_, identity) = state
        .services
        .start_visitor(&parts.widget_key, profile, parts.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(identity)))
}

/// What the widget needs before it shows anything: whether the workspace is open
/// now by its business hours (closed, the widget offers the offline form), when
/// that changes, and the workspace's language.
#[utoipa::path(get, path = "/widget/config", tag = "widget",
    security(("widgetKey" = [])),
    responses((status = 200, body = WidgetConfig), AuthErrors))]
async fn config(State(state): State<AppState>, parts: AnonymousVisitor) -> ApiResult<Json<WidgetConfig>> {
    Ok(Json(state.services.widget_config(&parts.widget_key).await?))
}

/// The visitor's messages, newest first. Messages to the visitor on the page count
/// as delivered from now on.
#[utoipa::path(get, path = "/widget/message", tag = "widget", params(PageRequest),
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, body = Page<Message>), AuthErrors, InputErrors))]
async fn list_messages(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Message>>> {
    Ok(Json(
        state
            .services
            .visitor_messages(&visitor.tenant_id, &visitor.customer_id, &page)
            .await?,
    ))
}

/// The visitor writes: the conversation becomes `UNREAD` and `message.received`
/// fires. `type` defaults to `MESSAGE`; visitors cannot send cards. `pageUrl` and
/// `language`, when given, are kept on the customer before the message is routed.
#[utoipa::path(post, path = "/widget/message", tag = "widget", request_body = WidgetMessageIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 201, body = Message), AuthErrors, InputErrors))]
async fn post_message(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<WidgetMessageIn>,
) -> ApiResult<(StatusCode, Json<Message>)> {
    let message = state
        .services
        .visitor_message(&visitor.tenant_id, &visitor.customer_id, input, &visitor.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(message)))
}

/// The visitor asks for a video call (the chat's *Start a video call*): the
/// conversation is routed by the routing rules whose `types` include `CALL`
/// (reason `CALL_REQUESTED`; a tenant without such rules routes nothing), the
/// agent it is then assigned to is notified, and a call owned by that agent is
/// started, with a waiting room. Answers the invitation: a `CARD` message whose
/// `buttonLink` opens the call (it also reaches the chat like any message).
/// While the visitor's call is still open, asking again answers the same
/// invitation and starts nothing. While the workspace is closed (its business
/// hours), 409 `closed`.
#[utoipa::path(post, path = "/widget/call", tag = "widget",
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 201, body = Message), AuthErrors, ConflictError))]
async fn request_call(visitor: Visitor, State(state): State<AppState>) -> ApiResult<(StatusCode, Json<Message>)> {
    let invitation = state
        .services
        .request_call(&visitor.tenant_id, &visitor.customer_id)
        .await?;
    Ok((StatusCode::CREATED, Json(invitation)))
}

/// A file's bytes, as the body of an upload.
#[derive(utoipa::ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)] // Only read by the OpenAPI derive.
struct FileBytes(Vec<u8>);

/// Where a visitor's file upload names the file.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct FileQuery {
    /// The file's name (required; a path is cut to its last part, control
    /// characters are dropped, at most 200 characters are kept).
    #[param(required = true, nullable = false, min_length = 1)]
    name: Option<String>,
}

/// The visitor sends a file: the body is the file itself (not a form), its
/// `Content-Type` the file's type, `?name=` its name. It is stored and posted
/// as the visitor's `FILE` message, whose `message` is the file's name and
/// whose `url` is its download link (`/files/{token}/{name}`: the link alone
/// opens it, for the visitor, the agents and webhook receivers). Files larger
/// than `maxFileBytes` of `GET /widget/config` (`RAPPORT_MAX_FILE_BYTES`,
/// default 10 MiB) are refused with 413 `file_too_large`, and a file that would
/// take the workspace's files past its bound (`fileBytes` of `GET
/// /tenant/{id}/limits`) with 413 `file_storage_full`; an empty file is 422 on
/// `file`. The message routes and notifies like any other
/// (`message.received`).
#[utoipa::path(post, path = "/widget/file", tag = "widget", params(FileQuery),
    request_body(content = FileBytes, content_type = "*/*",
        description = "The file's bytes; `Content-Type` gives its type (any type is accepted; without one, `application/octet-stream`)"),
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 201, description = "The file, posted as the visitor's message", body = Message), AuthErrors, FileErrors))]
async fn post_file(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiQuery(query): ApiQuery<FileQuery>,
    headers: axum::http::HeaderMap,
    body: axum::body::Body,
) -> ApiResult<(StatusCode, Json<Message>)> {
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "file_too_large",
            format!("files may have at most {} bytes", state.services.max_file_bytes()),
        )
    };
    // Read here rather than by an extractor, so that a body without a declared
    // length that runs past the limit (`limit_body` cuts it) is refused in the
    // same words, with the widget's CORS headers.
    let body = axum::body::to_bytes(body, usize::MAX).await.map_err(|e| {
        if crate::http::middleware::is_length_limit(&e) {
            too_large()
        } else {
            ApiError::bad_request("unreadable_body", "the file could not be read")
        }
    })?;
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let upload = FileUpload {
        name: query.name.as_deref().unwrap_or_default(),
        content_type,
        bytes: &body,
    };
    let message = state
        .services
        .visitor_file(&visitor.tenant_id, &visitor.customer_id, upload, &visitor.actor)
        .await
        .map_err(|e| match e {
            // With files off (limit 0) every file is too large.
            CoreError::Validation(fields)
                if fields
                    .iter()
                    .any(|f| f.code == "file_too_large" || f.code == "files_off") =>
            {
                too_large()
            }
            other => other.into(),
        })?;
    Ok((StatusCode::CREATED, Json(message)))
}

/// The visitor sends an offline or contact form: it is stored as the visitor's
/// message in its conversation (type `MESSAGE`, the form's parts laid out as
/// text: `Contact form`, name, e-mail, page, the message, then each field as
/// `label: value`), so agents see it in the inbox and routing and SLA rules treat
/// it as a customer message (`message.received` fires). It is audited as
/// `form.submit` and fires the tenant's `FORM_SUBMISSION` watchdogs.
#[utoipa::path(post, path = "/widget/form", tag = "widget", request_body = FormIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 201, description = "The form, stored as the visitor's message", body = Message), AuthErrors, InputErrors))]
async fn post_form(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<FormIn>,
) -> ApiResult<(StatusCode, Json<Message>)> {
    let message = state
        .services
        .visitor_form(&visitor.tenant_id, &visitor.customer_id, input, &visitor.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(message)))
}

/// Tag the visitor (the visitor script's tag call): adds the tags to its
/// customer's `pageTags`, keeping those it has (tags compare
/// case-insensitively), at most 50 in all, and fires `customer.updated` when
/// they change. They are kept apart from the `tags` agents and integrations
/// set, since any page can set them: a `HAS_TAG` condition reads both unless
/// its `source` is `TRUSTED` or `PAGE`.
#[utoipa::path(post, path = "/widget/tags", tag = "widget", request_body = VisitorTagsIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, body = VisitorTags), AuthErrors, InputErrors))]
async fn add_tags(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<VisitorTagsIn>,
) -> ApiResult<Json<VisitorTags>> {
    Ok(Json(
        state
            .services
            .add_visitor_tags(&visitor.tenant_id, &visitor.customer_id, input, &visitor.actor)
            .await?,
    ))
}

/// A widget request before the visitor has a token: a valid widget key, and the
/// client for the audit log.
pub(super) struct AnonymousVisitor {
    pub(super) widget_key: String,
    pub(super) actor: Actor,
}

impl FromRequestParts<AppState> for AnonymousVisitor {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let widget_key = parts
            .headers
            .get(WIDGET_KEY_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| ApiError::unauthorized("missing_widget_key", "send the rapport-widget-key header"))?
            .to_string();
        state
            .services
            .tenant_by_widget_key(&widget_key)
            .await
            .map_err(|_| ApiError::unauthorized("invalid_widget_key", "unknown widget key"))?;
        Ok(AnonymousVisitor {
            widget_key,
            // The customer's id is only known once it is created.
            actor: actor(parts, ActorKind::Customer, ""),
        })
    }
}

/// Report what the visitor script saw: finished visits, recorded sessions with
/// their reason, page resources and script errors (1–100 events per batch, each
/// with its own id; a retried batch is recorded once). All or nothing: one bad
/// event rejects the batch, naming `events[i].field`. Each tenant may report a
/// bounded number of events per minute (`RAPPORT_TRACK_EVENTS_PER_MINUTE`), and
/// one client address a tenth of that (at least 100); beyond either the batch is
/// refused with 429 and `Retry-After`, and nothing of it is kept.
#[utoipa::path(post, path = "/widget/track", tag = "widget", request_body = TrackBatch,
    security(("widgetKey" = [])),
    responses((status = 202, body = TrackResult), AuthErrors, InputErrors))]
async fn track(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    parts: AnonymousVisitor,
    ApiJson(batch): ApiJson<TrackBatch>,
) -> ApiResult<(StatusCode, Json<TrackResult>)> {
    let tenant_id = state.services.tenant_by_widget_key(&parts.widget_key).await?;
    state
        .limiters
        .check_track(&tenant_id, ip, batch.events.len())
        .await
        .map_err(ApiError::rate_limited)?;
    let result = state.services.track(&tenant_id, batch).await?;
    Ok((StatusCode::ACCEPTED, Json(result)))
}
