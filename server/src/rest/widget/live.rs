//! The visitor's live messages, two ways: a WebSocket (`/widget/socket`), which
//! the visitor script prefers, and server-sent events (`/widget/stream`), its
//! fallback where a proxy will not upgrade. Both carry the same updates of the
//! customer's widget room and spend the same `openStreams` allowance.
//!
//! The socket exists for memory: an idle server-sent-event stream keeps its
//! HTTP connection and with it the HTTP server's read and write buffers (16 KiB
//! between them); an upgraded socket gives them back and reads into a buffer
//! sized for the one small frame a page ever sends.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{
        ws::{rejection::WebSocketUpgradeRejection, CloseFrame, Message as Frame, WebSocket, WebSocketUpgrade},
        State,
    },
    http::StatusCode,
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
};
use chrono::{DateTime, Utc};
use futures_util::{Stream, StreamExt};
use rapport_core::{
    conversations::{Direction, Message},
    ids::{MessageId, TenantId},
    live::{LiveEvent, LiveUpdate, Room},
    open_streams::StreamSlot,
    time::from_ms,
};
use serde::{Deserialize, Serialize};

use super::Visitor;
use crate::{
    http::{
        error::{ApiError, ApiResult, AuthErrors, Problem},
        live_updates,
    },
    state::AppState,
};

/// How long a socket may stay open without saying who it is.
const HELLO_TIMEOUT: Duration = Duration::from_secs(10);
/// How often an open socket is pinged, so that proxies keep it and a vanished
/// page is noticed.
const PING_EVERY: Duration = Duration::from_secs(30);
/// The largest frame a page may send: its hello, with room to spare.
const MAX_FRAME: usize = 4 * 1024;

/// What a widget room's update means to a visitor's page.
enum WidgetUpdate {
    /// A message of the conversation was stored, either direction.
    Message(MessageId),
    /// The conversation's status changed, or it was rated.
    Conversation,
    /// An agent types (or stopped), shown by this name.
    Typing { name: Option<String>, typing: bool },
    /// An agent has read the conversation up to this message time.
    Read { up_to: DateTime<Utc> },
    /// Updates were lost (the subscriber fell behind): read the history again.
    Resync,
}

impl WidgetUpdate {
    fn of(update: &LiveUpdate) -> Option<WidgetUpdate> {
        match &update.event {
            LiveEvent::Message { message_id } => Some(WidgetUpdate::Message(message_id.clone())),
            LiveEvent::Conversation => Some(WidgetUpdate::Conversation),
            LiveEvent::Typing {
                by_visitor: false,
                name,
                active,
                ..
            } => Some(WidgetUpdate::Typing {
                name: name.clone(),
                typing: *active,
            }),
            LiveEvent::Read {
                by_visitor: false,
                up_to_ms,
            } => Some(WidgetUpdate::Read {
                up_to: from_ms(*up_to_ms),
            }),
            LiveEvent::Resync => Some(WidgetUpdate::Resync),
            _ => None,
        }
    }
}

/// The stored message a page is about to carry; one sent to the visitor counts
/// as delivered once a page carries it. `None` when it is gone again (its
/// customer was deleted meanwhile): there is nothing to show.
async fn read_message(state: &AppState, tenant_id: &TenantId, message_id: &MessageId) -> Option<Box<Message>> {
    let message = state.services.get_message(tenant_id, message_id).await.ok()?;
    if message.direction == Direction::Outbound {
        let _ = state
            .services
            .mark_delivered(tenant_id, &message.customer_id, &[message.id.as_str()])
            .await;
    }
    Some(Box::new(message))
}

/// Server-sent events: each message of the visitor's conversation arrives as a
/// `message` event (data: the Message object) the moment it is stored, and a
/// `conversation` event when its status changes or it is rated (ask `GET
/// /widget/csat` whether to show the rating question), a `typing` event
/// (`{"name": …, "typing": true|false}`) while an agent types a reply, and a
/// `read` event (`{"upTo": …}`) when an agent has read the conversation up to
/// a message's time. Those
/// sent to the visitor (`OUTBOUND`) count as delivered; those the visitor wrote
/// (`INBOUND`) come too, so that its other devices (a verified visitor's phone
/// and laptop) show them. A `resync` event says messages may have been missed:
/// read `GET /widget/message` again. Messages sent while no stream was open wait
/// in `GET /widget/message`. `GET /widget/socket` carries the same events over a
/// WebSocket, for less of the server's memory.
///
/// A workspace's pages hold at most `openStreams` streams open at once on each
/// instance (`GET /tenant/{id}/limits`), counting widget sockets, recording
/// control streams and live views; past it, 429 `stream_allowance_spent` with
/// `Retry-After`, and the page reads `GET /widget/message` meanwhile.
#[utoipa::path(get, path = "/widget/stream", tag = "widget",
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, description = "An event stream", content_type = "text/event-stream"), AuthErrors))]
pub(super) async fn stream(
    visitor: Visitor,
    State(state): State<AppState>,
) -> ApiResult<Sse<impl Stream<Item = Result<Event, Infallible>>>> {
    let Visitor {
        tenant_id, customer_id, ..
    } = visitor;
    let slot = state.services.open_public_stream(&tenant_id).await?;
    let room = Room::Widget {
        tenant_id: tenant_id.clone(),
        customer_id,
    };
    let updates = live_updates::updates(state.services.live().subscribe(room))
        .filter_map(move |update| {
            // The slot goes with the stream: its place is given back when the page leaves.
            let _held = &slot;
            std::future::ready(WidgetUpdate::of(&update))
        })
        .then(move |update| {
            let (state, tenant_id) = (state.clone(), tenant_id.clone());
            // Boxed: `then` keeps its future inline, and a database call's state
            // would otherwise be part of every idle stream's memory.
            Box::pin(async move {
                let message_id = match update {
                    WidgetUpdate::Resync => {
                        return Some(Ok::<_, Infallible>(Event::default().event("resync").data("{}")))
                    }
                    WidgetUpdate::Conversation => {
                        return Some(Ok(Event::default().event("conversation").data("{}")));
                    }
                    WidgetUpdate::Typing { name, typing } => {
                        let data = serde_json::json!({ "name": name, "typing": typing });
                        return Some(Ok(Event::default().event("typing").data(data.to_string())));
                    }
                    WidgetUpdate::Read { up_to } => {
                        let data = serde_json::json!({ "upTo": up_to });
                        return Some(Ok(Event::default().event("read").data(data.to_string())));
                    }
                    WidgetUpdate::Message(message_id) => message_id,
                };
                let message = read_message(&state, &tenant_id, &message_id).await?;
                Some(Ok(Event::default()
                    .event("message")
                    .json_data(&message)
                    .unwrap_or_else(|_| Event::default().comment("unserialisable message"))))
            })
        })
        .filter_map(std::future::ready);
    Ok(Sse::new(updates).keep_alive(KeepAlive::default()))
}

/// The page's first frame on `/widget/socket`: who it is. A WebSocket cannot
/// carry the widget's headers, so they come as its first message.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub(super) struct SocketHello {
    /// The workspace's widget key (what `rapport-widget-key` carries elsewhere).
    widget_key: String,
    /// The visitor token from `POST /widget/visitor` (never logged).
    visitor_token: String,
}

/// A frame the server sends on `/widget/socket` (JSON text).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(tag = "event", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub(super) enum SocketFrame {
    /// The visitor is known and the socket listens: fetch what was missed
    /// (`GET /widget/message`), then take messages from here.
    Ready,
    /// A message of the conversation, as `GET /widget/message` returns it.
    Message { data: Box<Message> },
    /// Messages may have been missed: read `GET /widget/message` again.
    Resync,
    /// The conversation's status changed (or it was rated): ask `GET
    /// /widget/csat` whether to show the rating question.
    Conversation,
    /// An agent is typing a reply (`typing: true`, repeated while it goes on),
    /// or stopped: show "`name` is typing…" (without a name, that someone
    /// is), and forget it 6 seconds after the last.
    Typing {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        typing: bool,
    },
    /// An agent has read the conversation up to `upTo`: the visitor's messages
    /// created up to then are seen.
    Read { up_to: DateTime<Utc> },
    /// The socket will not listen, and closes with code 4000 + `problem.status`
    /// (4400, 4401, 4429). After 4429 try again after `retryAfter` seconds.
    Error {
        problem: Problem,
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_after: Option<u64>,
    },
}

/// A WebSocket carrying what `GET /widget/stream` does, for less memory. The
/// page's first text frame, within 10 s, is a `SocketHello` (widget key and
/// visitor token). Then the server sends `SocketFrame`s: `ready`; each `message`
/// of the conversation (data: the Message object; `OUTBOUND` ones count as
/// delivered); `conversation` when its status changes or it is rated (ask `GET
/// /widget/csat`); `typing` while an agent types (`name`, `typing`); `read` when
/// an agent has read up to `upTo`; `resync` when messages may have been missed. A refused hello
/// gets an `error` frame with the problem (401 `invalid_visitor`, 429
/// `stream_allowance_spent` with `retryAfter`, 400 `invalid_hello`) and a close
/// with code 4000 + its status. The server pings every 30 s; frames the page
/// sends after its hello are ignored, and one over 4 KiB closes the socket.
/// Without an `Upgrade: websocket` request: 426 `websocket_required`.
#[utoipa::path(get, path = "/widget/socket", tag = "widget",
    // The upgrade itself is open to any page: who it is comes in the hello.
    security(()),
    responses(
        (status = 101, description = "Switching to a WebSocket: the hello goes in, `SocketFrame`s come out"),
        (status = 426, description = "Not a WebSocket request (`websocket_required`)", body = Problem, content_type = "application/problem+json"),
        AuthErrors))]
pub(super) async fn socket(
    State(state): State<AppState>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let Ok(upgrade) = upgrade else {
        return ApiError::new(
            StatusCode::UPGRADE_REQUIRED,
            "websocket_required",
            "open this path as a WebSocket (GET /widget/stream serves server-sent events)",
        )
        .into_response();
    };
    upgrade
        // The page sends one small frame; the default buffer is 128 KiB a socket.
        .read_buffer_size(1024)
        .write_buffer_size(0)
        .max_message_size(MAX_FRAME)
        .max_frame_size(MAX_FRAME)
        .on_upgrade(move |socket| Box::pin(serve_socket(state, socket)))
}

/// One page's socket: its hello, then the room's updates until either side
/// leaves.
async fn serve_socket(state: AppState, mut socket: WebSocket) {
    let (tenant_id, room, slot) = match tokio::time::timeout(HELLO_TIMEOUT, listen(&state, &mut socket)).await {
        Ok(Ok(listening)) => listening,
        Ok(Err(refusal)) => return refuse(socket, refusal).await,
        Err(_) => {
            let refusal = ApiError::bad_request("invalid_hello", "no hello within 10 seconds");
            return refuse(socket, refusal).await;
        }
    };
    let mut subscription = state.services.live().subscribe(room);
    if send(&mut socket, &SocketFrame::Ready).await.is_err() {
        return;
    }
    let ping = tokio::time::sleep(PING_EVERY);
    tokio::pin!(ping);
    loop {
        tokio::select! {
            update = subscription.recv() => {
                let Some(update) = WidgetUpdate::of(&update) else { continue };
                // Boxed: the database call's state would otherwise be part of
                // every idle socket's memory.
                if Box::pin(forward(&state, &tenant_id, &mut socket, update)).await.is_err() {
                    break;
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Frame::Close(_))) | Some(Err(_)) | None => break,
                Some(Ok(_)) => {}
            },
            () = &mut ping => {
                if socket.send(Frame::Ping(Default::default())).await.is_err() {
                    break;
                }
                ping.as_mut().reset(tokio::time::Instant::now() + PING_EVERY);
            }
        }
    }
    drop(slot);
}

/// Reads the hello and takes a place among the workspace's streams.
async fn listen(state: &AppState, socket: &mut WebSocket) -> Result<(TenantId, Room, StreamSlot), ApiError> {
    let hello = loop {
        match socket.recv().await {
            Some(Ok(Frame::Text(text))) => break text,
            Some(Ok(Frame::Ping(_) | Frame::Pong(_))) => continue,
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_hello",
                    "the first frame must be the hello",
                ))
            }
        }
    };
    let hello: SocketHello = serde_json::from_str(hello.as_str()).map_err(|_| {
        ApiError::bad_request(
            "invalid_hello",
            "the first frame must be {\"widgetKey\": …, \"visitorToken\": …}",
        )
    })?;
    let (tenant_id, customer) = state
        .services
        .visitor(&hello.widget_key, &hello.visitor_token)
        .await
        .map_err(|_| ApiError::unauthorized("invalid_visitor", "unknown widget key or visitor token"))?;
    let slot = state.services.open_public_stream(&tenant_id).await?;
    let room = Room::Widget {
        tenant_id: tenant_id.clone(),
        customer_id: customer.id,
    };
    Ok((tenant_id, room, slot))
}

async fn forward(
    state: &AppState,
    tenant_id: &TenantId,
    socket: &mut WebSocket,
    update: WidgetUpdate,
) -> Result<(), ()> {
    let frame = match update {
        WidgetUpdate::Resync => SocketFrame::Resync,
        WidgetUpdate::Conversation => SocketFrame::Conversation,
        WidgetUpdate::Typing { name, typing } => SocketFrame::Typing { name, typing },
        WidgetUpdate::Read { up_to } => SocketFrame::Read { up_to },
        WidgetUpdate::Message(message_id) => match read_message(state, tenant_id, &message_id).await {
            Some(message) => SocketFrame::Message { data: message },
            None => return Ok(()),
        },
    };
    send(socket, &frame).await
}

async fn send(socket: &mut WebSocket, frame: &SocketFrame) -> Result<(), ()> {
    let text = serde_json::to_string(frame).map_err(|_| ())?;
    socket.send(Frame::Text(text.into())).await.map_err(|_| ())
}

/// Says why the socket will not listen, then closes it with 4000 + the status.
async fn refuse(mut socket: WebSocket, refusal: ApiError) {
    let retry_after = refusal.wait_secs();
    let problem = refusal.into_problem();
    let code = 4000 + problem.status;
    let reason = problem.code.clone();
    let _ = send(&mut socket, &SocketFrame::Error { problem, retry_after }).await;
    let _ = socket
        .send(Frame::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}
