//! `GET /cobrowse/{id}/ws?token=…`: a participant's connection to a universal
//! co-browsing session.
//!
//! The token is the link's: the host's link joins as host, the join link as a
//! guest. A link that does not work still gets its socket, with one `error`
//! message saying why, so the page can tell the person. A session whose browser
//! runs on another instance is reached through this one: the socket is relayed
//! to the instance the session's claim names (its `RAPPORT_INSTANCE_URL`).

use axum::{
    extract::{
        ws::{Message, Utf8Bytes, WebSocket, WebSocketUpgrade},
        Path, Query, State,
    },
    http::HeaderMap,
    response::Response,
};
use futures_util::{SinkExt, StreamExt};
use rapport_core::{
    audit::{Actor, ActorKind},
    error::CoreError,
    links::CobrowseRole,
};
use serde::Deserialize;
use tokio_tungstenite::tungstenite;

use super::{
    protocol,
    protocol::ClientMessage,
    session::{JoinError, Joined},
    JoinRefusal,
};
use crate::{http::client_ip::ClientIp, state::AppState};

/// Marks a socket relayed by another instance: it is never relayed again.
const RELAYED: &str = "x-rapport-relayed";

/// The link's token.
#[derive(Debug, Deserialize)]
pub struct LinkToken {
    token: String,
}

/// `GET /cobrowse/{id}/ws`.
pub async fn cobrowse_socket(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(link): Query<LinkToken>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let session = match state.services.open_cobrowse(&id, &link.token).await {
        Ok(s) => s,
        Err(CoreError::Conflict { message, .. }) => return refuse(upgrade, "invalid_link", message),
        Err(CoreError::NotFound(_)) => {
            return refuse(upgrade, "invalid_link", "This co-browsing link does not work.".into());
        }
        Err(e) => {
            tracing::error!(error = %e, "co-browsing: reading the session failed");
            return refuse(upgrade, "starting_failed", "Rapport could not open the session.".into());
        }
    };
    let relayed = headers.contains_key(RELAYED);
    match state.cobrowsing.session(&session).await {
        Ok(handle) => {
            let actor = Actor {
                kind: if session.role == CobrowseRole::Host && session.host_user_id.is_some() {
                    ActorKind::User
                } else {
                    ActorKind::System
                },
                id: match (session.role, &session.host_user_id) {
                    (CobrowseRole::Host, Some(user)) => user.clone(),
                    _ => "cobrowse guest".into(),
                },
                ip: Some(client.to_string()),
                request_id: None,
            };
            upgrade.on_upgrade(move |socket| async move {
                match handle.join(session.role, actor).await {
                    Ok(joined) => participate(socket, joined).await,
                    Err(JoinError::Full(max)) => {
                        let message = format!(
                            "This co-browsing session already has as many people as it may ({max}). Ask its host."
                        );
                        close_with(socket, protocol::error("session_full", &message)).await
                    }
                    // It has just ended: say why.
                    Err(JoinError::Ended) => {
                        let reason = handle.ended().unwrap_or_else(|| "shutdown".into());
                        close_with(socket, protocol::ended(&reason)).await
                    }
                }
            })
        }
        Err(JoinRefusal::Elsewhere(owner)) if !relayed => {
            upgrade.on_upgrade(move |socket| relay(socket, owner, id, link.token))
        }
        Err(JoinRefusal::Elsewhere(_)) => refuse(
            upgrade,
            "starting_failed",
            "The instance running this session cannot be reached.".into(),
        ),
        Err(JoinRefusal::TenantBusy(max)) => refuse(
            upgrade,
            "tenant_busy",
            format!(
                "This workspace already runs as many co-browsing sessions as it may ({max}). End one, or try again in a few minutes."
            ),
        ),
        Err(JoinRefusal::Busy(max)) => refuse(
            upgrade,
            "busy",
            format!(
                "This server already runs as many co-browsing sessions as it may ({max}). Try again in a few minutes."
            ),
        ),
        Err(JoinRefusal::Unavailable(reason)) => refuse(
            upgrade,
            "unavailable",
            format!("Co-browsing is not available on this server: {reason}."),
        ),
        Err(JoinRefusal::Ended) => refuse(
            upgrade,
            "invalid_link",
            "This co-browsing session has ended. Ask for a new link.".into(),
        ),
        Err(JoinRefusal::Failed(_)) => refuse(
            upgrade,
            "starting_failed",
            "The shared browser could not be started. Try again in a moment.".into(),
        ),
    }
}

/// Upgrades only to say why the link does not open, then closes.
fn refuse(upgrade: WebSocketUpgrade, code: &'static str, message: String) -> Response {
    upgrade.on_upgrade(move |socket| close_with(socket, protocol::error(code, &message)))
}

async fn close_with(mut socket: WebSocket, text: String) {
    let _ = socket.send(Message::Text(text.into())).await;
    let _ = socket.send(Message::Close(None)).await;
}

/// Carries a participant's socket: the session's messages and frames out,
/// theirs in.
async fn participate(socket: WebSocket, mut joined: Joined) {
    let (mut sink, mut stream) = socket.split();
    let first = joined.frames.borrow_and_update().clone();
    let welcome = joined.welcome.clone();
    // The writer owns the session's queue and frames; the reader runs beside
    // it, and either ending ends both.
    let mut texts = std::mem::replace(&mut joined.texts, tokio::sync::mpsc::channel(1).1);
    let mut frames = joined.frames.clone();
    let writer = async move {
        sink.send(Message::Text(welcome.into())).await?;
        if let Some(frame) = first {
            sink.send(Message::Binary(frame)).await?;
        }
        loop {
            tokio::select! {
                text = texts.recv() => match text {
                    Some(text) => sink.send(Message::Text(Utf8Bytes::from(&*text))).await?,
                    // The session ended (its last message was `ended`).
                    None => {
                        let _ = sink.send(Message::Close(None)).await;
                        return Ok::<_, axum::Error>(());
                    }
                },
                changed = frames.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let frame = frames.borrow_and_update().clone();
                    if let Some(frame) = frame {
                        sink.send(Message::Binary(frame)).await?;
                    }
                }
            }
        }
    };
    let reader = async {
        while let Some(Ok(message)) = stream.next().await {
            match message {
                Message::Text(text) => {
                    if let Ok(message) = serde_json::from_str::<ClientMessage>(text.as_str()) {
                        joined.said(message).await;
                    }
                }
                Message::Close(_) => break,
                _ => {}
            }
        }
    };
    tokio::select! {
        _ = writer => {}
        _ = reader => {}
    }
    joined.left().await;
}

/// Relays a participant to the instance at `owner`, message for message.
async fn relay(socket: WebSocket, owner: String, id: String, token: String) {
    let base = owner
        .trim_end_matches('/')
        .replacen("https://", "wss://", 1)
        .replacen("http://", "ws://", 1);
    let mut target = match url::Url::parse(&format!("{base}/cobrowse/{id}/ws")) {
        Ok(u) => u,
        Err(_) => {
            return close_with(
                socket,
                protocol::error("starting_failed", "The session's instance is misconfigured."),
            )
            .await;
        }
    };
    target.query_pairs_mut().append_pair("token", &token);
    let mut request = match tungstenite::client::IntoClientRequest::into_client_request(target.as_str()) {
        Ok(r) => r,
        Err(_) => return,
    };
    request
        .headers_mut()
        .insert(RELAYED, axum::http::HeaderValue::from_static("1"));
    let upstream = match tokio_tungstenite::connect_async(request).await {
        Ok((upstream, _)) => upstream,
        Err(e) => {
            tracing::warn!(error = %e, %owner, "co-browsing: the session's instance cannot be reached");
            // No `error`: the page reconnects, and once the claim goes stale
            // this instance takes the session over.
            let mut socket = socket;
            let _ = socket.send(Message::Close(None)).await;
            return;
        }
    };
    let (mut up_sink, mut up_stream) = upstream.split();
    let (mut sink, mut stream) = socket.split();
    let down = async {
        while let Some(Ok(message)) = up_stream.next().await {
            let message = match message {
                tungstenite::Message::Text(t) => Message::Text(Utf8Bytes::from(t.as_str())),
                tungstenite::Message::Binary(b) => Message::Binary(b),
                tungstenite::Message::Close(_) => break,
                _ => continue,
            };
            if sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = sink.send(Message::Close(None)).await;
    };
    let up = async {
        while let Some(Ok(message)) = stream.next().await {
            let message = match message {
                Message::Text(t) => tungstenite::Message::text(t.as_str()),
                Message::Close(_) => break,
                _ => continue,
            };
            if up_sink.send(message).await.is_err() {
                break;
            }
        }
        let _ = up_sink.close().await;
    };
    tokio::select! {
        _ = down => {}
        _ = up => {}
    }
}
