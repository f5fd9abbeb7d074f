//! Session recording over REST.
//!
//! The visitor script's side is public, like the rest of `/widget`: the widget
//! key names the tenant, and a recording's write token (from
//! `POST /widget/recording`) is the only thing that may append to it. Batches
//! may come gzip-compressed (`Content-Encoding: gzip`, as `CompressionStream`
//! makes them). The script's control stream tells it when a live viewer joins.
//!
//! The tenant's side: the recording settings of the workspace, and a recorded
//! session's events for replay.

use std::convert::Infallible;

use axum::{
    body::Bytes,
    extract::{FromRequestParts, Path, State},
    http::{header, request::Parts, HeaderMap, StatusCode},
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
    Json,
};
use futures_util::{stream, StreamExt};
use rapport_core::{
    audit::{Actor, ActorKind},
    cobrowsing::{visitor_resume, VisitorCobrowse},
    error::CoreError,
    ids::TenantId,
    live::{LiveEvent, Room},
    recordings::{
        gunzip, RecordingAck, RecordingBatch, RecordingSettings, RecordingSettingsIn, RecordingStart, RecordingStarted,
        MAX_BATCH_BYTES,
    },
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiError, ApiResult, AuthErrors, ConflictError, InputErrors, NotFoundError},
        extract::{bearer_token, parse_json, ApiJson, TenantAuth},
        live_updates,
    },
    rest::widget::{widget_cors, AnonymousVisitor, WIDGET_KEY_HEADER},
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    let public = OpenApiRouter::new()
        .routes(routes!(start))
        .routes(routes!(append))
        .routes(routes!(control))
        .routes(routes!(cobrowse))
        .layer(widget_cors());
    OpenApiRouter::new()
        .routes(routes!(get_settings, put_settings))
        .routes(routes!(events))
        .merge(public)
}

fn widget_key(headers: &HeaderMap) -> Result<String, ApiError> {
    headers
        .get(WIDGET_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| ApiError::unauthorized("missing_widget_key", "send the rapport-widget-key header"))
}

/// The visitor script holding a recording's write token: the widget key, the
/// session in the path and the token agree. Checked before anything is read.
struct Writer {
    tenant_id: TenantId,
    session_id: String,
}

impl FromRequestParts<AppState> for Writer {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        let key = widget_key(&parts.headers)?;
        let token = bearer_token(parts)?
            .ok_or_else(|| ApiError::unauthorized("missing_write_token", "send Authorization: Bearer <write token>"))?;
        let Path(session_id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::for_status(StatusCode::NOT_FOUND))?;
        let tenant_id = state
            .services
            .recording_writer(&key, &session_id, &token)
            .await
            .map_err(|e| match e {
                CoreError::Unauthenticated | CoreError::NotFound(_) => invalid_recording(),
                other => other.into(),
            })?;
        Ok(Writer { tenant_id, session_id })
    }
}

/// Start recording the visitor's session (the visitor script, when the
/// workspace records: `GET /widget/config` says so). It becomes a recorded
/// session (`/session/recorded`) with the tags given. With the visitor's token
/// (`Authorization: Bearer vt_…`, once the visitor chats) it belongs to that
/// customer, and agents open it from the conversation. The write token in the
/// answer is shown only here. 403 `recording_off` when the workspace does not
/// record.
#[utoipa::path(post, path = "/widget/recording", tag = "widget", request_body = RecordingStart,
    security(("widgetKey" = []), ("widgetKey" = [], "visitorToken" = [])),
    responses((status = 201, body = RecordingStarted), AuthErrors, InputErrors))]
async fn start(
    State(state): State<AppState>,
    visitor: AnonymousVisitor,
    parts: Parts,
    ApiJson(input): ApiJson<RecordingStart>,
) -> ApiResult<(StatusCode, Json<RecordingStarted>)> {
    let visitor_token = bearer_token(&parts)?;
    let (_, started) = state
        .services
        .start_recording(&visitor.widget_key, visitor_token.as_deref(), input, &visitor.actor)
        .await
        .map_err(|e| match e {
            rapport_core::error::CoreError::Unauthenticated => {
                ApiError::unauthorized("invalid_visitor", "unknown widget key or visitor token")
            }
            rapport_core::error::CoreError::Forbidden => {
                ApiError::forbidden("recording_off", "this workspace does not record sessions")
            }
            other => other.into(),
        })?;
    Ok((StatusCode::CREATED, Json(started)))
}

/// Append a batch of rrweb events to a recording (`Authorization: Bearer
/// <write token>`). The body is `application/json`, or that JSON compressed
/// with gzip (`Content-Encoding: gzip`; another encoding is 415
/// `unsupported_encoding`). The body as sent is at most the server's body limit
/// (`RAPPORT_MAX_BODY_BYTES`, 1 MiB by default), and at most 8 MiB once
/// inflated (413 `payload_too_large`); damaged gzip is 400 `unreadable_body`.
/// A batch sent again with the same `seq` is stored once. Live viewers get the
/// batch at once; the answer says whether someone watches, and then the script
/// sends every 100 ms.
///
/// What a session and a workspace keep is bounded (`GET /tenant/{id}/limits`),
/// counting each batch's events as JSON before compression: a batch that would
/// take the session past `recordingSessionBytes` is 413
/// `recording_session_full` (the script stops recording that session), and
/// one that would take the workspace past `recordingDayBytes` today (UTC) is
/// 429 `recording_allowance_spent`, with `Retry-After` up to midnight UTC. A
/// refused batch is not stored; what was stored before stays readable.
#[utoipa::path(post, path = "/widget/recording/{id}/events", tag = "widget", request_body = RecordingBatch,
    params(("id" = String, Path, description = "The recording's session id")),
    security(("widgetKey" = [], "writeToken" = [])),
    responses((status = 200, body = RecordingAck), AuthErrors, InputErrors))]
async fn append(
    State(state): State<AppState>,
    writer: Writer,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult<Json<RecordingAck>> {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
    if !is_json {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "send the body as application/json",
        ));
    }
    let encoding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase());
    let json = match encoding.as_deref() {
        None | Some("identity") => body.to_vec(),
        Some("gzip") => gunzip(&body, MAX_BATCH_BYTES).map_err(|e| match e.kind() {
            std::io::ErrorKind::FileTooLarge => ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                "the batch is over 8 MiB once inflated",
            ),
            _ => ApiError::bad_request("unreadable_body", "the gzip body is damaged"),
        })?,
        Some(other) => {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_encoding",
                format!("Content-Encoding {other} is not supported; send gzip or nothing"),
            ))
        }
    };
    let batch: RecordingBatch = parse_json(&json)?;
    let ack = state
        .services
        .append_recording(&writer.tenant_id, &writer.session_id, batch)
        .await
        // The session ended while this batch was on its way.
        .map_err(|e| match e {
            CoreError::Unauthenticated => invalid_recording(),
            other => other.into(),
        })?;
    Ok(Json(ack))
}

/// A write token that opens no recording (any more): the script starts anew.
fn invalid_recording() -> ApiError {
    ApiError::unauthorized(
        "invalid_recording",
        "unknown widget key, session or write token; start a new recording",
    )
}

/// The visitor script's control stream for a recording (server-sent events).
/// `watch` events: `{"watched": true, "snapshot": true}` when a live viewer
/// joins (take a full snapshot for it, then send every 100 ms), and
/// `{"watched": false}` once nobody has watched for 30 s; the first event says
/// the state at connection (`{"watched": …}`). `cobrowse` events carry an
/// agent's co-browse (README, "Co-browsing on sites with the script"):
/// `{"type": "request", "agent": …}`, `{"type": "active", "agent": …,
/// "control": …}` (at connection, while one goes on), `pointer`, `highlight`,
/// `click`, `type`, `key`, `scroll` and `{"type": "ended", "by": …}`, where
/// `by` is `agent` or `visitor` (who ended it), `agent_left` (the agent's live
/// view was gone for 30 s) or `visitor_left` (the session ended). It counts
/// toward the workspace's `openStreams` (429 `stream_allowance_spent` past it).
#[utoipa::path(get, path = "/widget/recording/{id}/control", tag = "widget",
    params(("id" = String, Path, description = "The recording's session id")),
    security(("widgetKey" = [], "writeToken" = [])),
    responses((status = 200, description = "An event stream", content_type = "text/event-stream"), AuthErrors))]
async fn control(State(state): State<AppState>, writer: Writer) -> Response {
    let Writer {
        tenant_id,
        session_id: id,
    } = writer;
    let slot = match state.services.open_public_stream(&tenant_id).await {
        Ok(slot) => slot,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let watched = match state.services.recording_watched(&tenant_id, &id).await {
        Ok(w) => w,
        Err(e) => return ApiError::from(e).into_response(),
    };
    let resume = match state.services.script_cobrowse(&tenant_id, &id).await {
        Ok(current) => current.as_ref().and_then(visitor_resume),
        Err(e) => return ApiError::from(e).into_response(),
    };
    let services = state.services.clone();
    let first = stream::once(async move { watch_event(watched) }).chain(stream::iter(
        resume.map(|data| Ok(Event::default().event("cobrowse").data(data))),
    ));
    let session = id.clone();
    let tenant = tenant_id.clone();
    // A live viewer joining (`Ok(None)`) or an agent's co-browse message.
    let room = Room::Recording {
        tenant_id: tenant,
        session_id: session,
    };
    let heard = live_updates::updates(state.services.live().subscribe(room)).filter_map(move |update| {
        let heard = match &update.event {
            LiveEvent::RecordingWatched { .. } => Some(None),
            LiveEvent::Cobrowse {
                to_visitor: true, data, ..
            } => Some(Some(data.clone())),
            _ => None,
        };
        std::future::ready(heard)
    });
    // Watching ends when viewers stop renewing: a tick finds that out.
    let ticks = tokio_stream::wrappers::IntervalStream::new(tokio::time::interval(std::time::Duration::from_secs(10)))
        .map(|_| ());
    // A viewer who joins asks for a full snapshot; the ticks only tell when
    // watching has ended.
    let joins = heard.map(|cobrowse| match cobrowse {
        Some(data) => Some(Ok(Event::default().event("cobrowse").data(data))),
        None => Some(Ok(Event::default()
            .event("watch")
            .data(r#"{"watched":true,"snapshot":true}"#))),
    });
    let ends = ticks
        .then(move |()| {
            let services = services.clone();
            let (tenant, id) = (tenant_id.clone(), id.clone());
            // Boxed: `then` keeps its future inline, and a database call's state
            // would otherwise be part of every idle stream's memory.
            Box::pin(async move { services.recording_watched(&tenant, &id).await.unwrap_or(false) })
        })
        .scan(watched, |last, now| {
            let changed = now != *last;
            *last = now;
            std::future::ready(Some(changed.then(|| watch_event(now))))
        });
    // The slot goes with the stream: its place is given back when the page leaves.
    let changes = stream::select(joins, ends).filter_map(move |event| {
        let _held = &slot;
        std::future::ready(event)
    });
    Sse::new(first.chain(changes))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// Answer an agent's co-browse request, hand control over or take it back, or
/// end it (the visitor script; README, "Co-browsing on sites with the
/// script"). `accept` and `decline` answer a request (`accept` again, once it
/// goes on, changes nothing); `grant` lets the agent click and type in this
/// page, `revoke` takes that back; `end` ends it, asked for or going on. 409
/// `not_active` when no co-browse is asked for or going on, and for `decline`
/// of one that already goes on (use `end`) or `grant` and `revoke` of one only
/// asked for. Audited (`cobrowse.accept`, `cobrowse.decline`,
/// `cobrowse.control`, `cobrowse.end`).
#[utoipa::path(post, path = "/widget/recording/{id}/cobrowse", tag = "widget", request_body = VisitorCobrowse,
    params(("id" = String, Path, description = "The recording's session id")),
    security(("widgetKey" = [], "writeToken" = [])),
    responses((status = 204, description = "Done"), AuthErrors, ConflictError, InputErrors))]
async fn cobrowse(
    State(state): State<AppState>,
    writer: Writer,
    parts: Parts,
    ApiJson(input): ApiJson<VisitorCobrowse>,
) -> ApiResult<StatusCode> {
    let actor = Actor {
        kind: ActorKind::Customer,
        id: format!("session:{}", writer.session_id),
        ip: Some(crate::http::extract::client_ip(&parts).to_string()),
        request_id: None,
    };
    state
        .services
        .visitor_cobrowse(&writer.tenant_id, &writer.session_id, input.action, &actor)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

fn watch_event(watched: bool) -> Result<Event, Infallible> {
    Ok(Event::default()
        .event("watch")
        .data(format!("{{\"watched\":{watched}}}")))
}

/// The workspace's recording settings: whether the visitor script records,
/// whether it needs the visitor's consent, what it masks and leaves out, and
/// how long recordings are kept.
#[utoipa::path(get, path = "/workspace/recording", tag = "session",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = RecordingSettings), AuthErrors))]
async fn get_settings(auth: TenantAuth, State(state): State<AppState>) -> ApiResult<Json<RecordingSettings>> {
    Ok(Json(state.services.recording_settings(&auth.tenant_id).await?))
}

/// Change the recording settings; omitted fields are kept, an empty selector
/// removes it. Audited as `recording.settings`.
#[utoipa::path(put, path = "/workspace/recording", tag = "session", request_body = RecordingSettingsIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = RecordingSettings), AuthErrors, InputErrors))]
async fn put_settings(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<RecordingSettingsIn>,
) -> ApiResult<Json<RecordingSettings>> {
    Ok(Json(
        state
            .services
            .set_recording_settings(&auth.tenant_id, input, &auth.actor)
            .await?,
    ))
}

/// Every recorded event of a session, in order: a JSON array of rrweb events,
/// for a replay (e.g. with `rrweb-player`). Empty when the session was only
/// reported, not recorded.
#[utoipa::path(get, path = "/session/{id}/events", tag = "session",
    params(("id" = String, Path, description = "Session id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, description = "The events", body = Vec<Object>), AuthErrors, NotFoundError))]
async fn events(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let replay = state.services.recording_replay(&auth.tenant_id, &id).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        crate::http::recording_views::replay_body(replay),
    )
        .into_response())
}
