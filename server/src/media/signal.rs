//! `GET /join/{token}/ws`: a participant's WebSocket to an appointment's
//! conference. JSON text frames, each with a `type`.
//!
//! The client says `hello {name, password?}` first. The server checks the
//! link's validity (`refused {reason: not_yet | ended | disabled}`), the
//! password (`refused {reason: password}`, hosts need none; after too many
//! wrong ones from one address, or for one link, `refused {reason:
//! rate_limited, retryAfter}` in seconds, before any is checked) and the
//! room's size (`refused {reason: full}`: 12 in the call, and 12 more in the
//! waiting room; hosts always get in). With the waiting room on, a guest hears
//! `waiting` until a host sends `admit {id}` (the guest hears `joined`) or
//! `decline {id}` (`declined`). Hosts are the signed-in agents of the
//! appointment's tenant, on a page of this origin.
//!
//! In the call: `joined {you, host, permissions: {screenShare, chat},
//! participants, recording}`, then `participants` and, for hosts, `lobby {waiting}` on
//! every change. The client sends its `offer {sdp, sources: {mid: mic |
//! camera | screen}}`; the server answers `answer {sdp}`. When the others'
//! tracks change, the server sends `offer {sdp, tracks: {mid: {participant,
//! kind, source, paused}}}` and the client answers `answer {sdp}`; `track {mid,
//! paused}` says a forwarded track stopped or resumed (a camera turned off, a
//! screen no longer shared). Without screen sharing, only one video track of
//! a participant is forwarded. `chat {text}` reaches everyone in the call as
//! `chat {from, name, text, at}` (refused with `error` where chat is off). A
//! host may `remove {id}` (that one hears `removed`). `leave`, or closing the
//! socket, leaves. `recording {recording}` says the call is now recorded, or
//! no longer.

use std::{collections::HashMap, time::Duration};

use axum::{
    extract::{
        ws::{Message, WebSocket, WebSocketUpgrade},
        Path, State,
    },
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use futures_util::{
    stream::{SplitSink, SplitStream},
    SinkExt, StreamExt,
};
use rapport_app::ssr::session_token;
use rapport_core::{
    appointments::Appointment,
    audit::{Actor, ActorKind},
    ids::TenantId,
    model::Role,
    CoreError,
};
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::{
    rooms::{Member, Outgoing},
    sfu::{PeerKey, SignalOut},
};
use crate::{
    http::{client_ip::ClientIp, middleware::is_same_origin},
    state::AppState,
};

/// How long a client has to say `hello`.
const HELLO_WITHIN: Duration = Duration::from_secs(30);
/// Longest name kept, in characters.
const MAX_NAME: usize = 80;

/// Who is connecting, before the socket opens.
struct Caller {
    tenant_id: TenantId,
    appointment: Appointment,
    /// A signed-in agent of the tenant, on this origin: the host.
    host: Option<String>,
    ip: std::net::IpAddr,
}

/// `GET /join/{token}/ws`.
pub async fn join_socket(
    State(state): State<AppState>,
    Path(token): Path<String>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    upgrade: WebSocketUpgrade,
) -> Response {
    let (tenant_id, appointment) = match state.services.appointment_by_join_token(&token).await {
        Ok(found) => found,
        Err(CoreError::NotFound(_)) => return (StatusCode::NOT_FOUND, "no such conference").into_response(),
        Err(err) => {
            tracing::error!(error = %err, "conference: cannot read the appointment");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    // Host rights ride on the dashboard's cookie, so only a page of this
    // origin may claim them: another site opening this socket with the
    // agent's cookie gets a guest's rights at most.
    let host = match session_token(&headers) {
        Some(token) if is_same_origin(&headers, &state.config) => match state.services.session_user(&token).await {
            Ok(Some(user)) if user.tenant_id == tenant_id && user.role.includes(Role::Agent) => {
                Some(user.id.into_string())
            }
            _ => None,
        },
        _ => None,
    };
    let caller = Caller {
        tenant_id,
        appointment,
        host,
        ip: client,
    };
    upgrade.on_upgrade(move |socket| serve(state, socket, caller))
}

/// Reads the next JSON text frame; `None` when the socket closed.
async fn next_json(stream: &mut Stream) -> Option<Value> {
    while let Some(Ok(message)) = stream.next().await {
        match message {
            Message::Text(text) => return serde_json::from_str(text.as_str()).ok().or(Some(Value::Null)),
            Message::Close(_) => return None,
            _ => {}
        }
    }
    None
}

/// Why a caller may not enter now, if they may not.
fn refusal(appointment: &Appointment) -> Option<&'static str> {
    let now = chrono::Utc::now();
    if !appointment.valid {
        Some("disabled")
    } else if now < appointment.valid_from {
        Some("not_yet")
    } else if now >= appointment.valid_until {
        Some("ended")
    } else {
        None
    }
}

/// The write half of a participant's socket.
type Sink = SplitSink<WebSocket, Message>;
/// The read half of a participant's socket.
type Stream = SplitStream<WebSocket>;

/// How long the server waits for the client's close frame after its own.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Runs one participant's socket, then closes it with the closing handshake.
async fn serve(state: AppState, socket: WebSocket, caller: Caller) {
    let (mut sink, mut stream) = socket.split();
    converse(state, &mut sink, &mut stream, caller).await;
    let _ = sink.close().await;
    // Dropping a socket with unread input (a frame the client sent just as
    // it was removed or declined) resets the connection, and a reset can
    // discard the last frames before the client reads them. So the server
    // reads on until the client's close frame, for a bounded time: a client
    // that never answers holds this task for `CLOSE_GRACE` at most.
    let _ = tokio::time::timeout(CLOSE_GRACE, async {
        while let Some(Ok(message)) = stream.next().await {
            if matches!(message, Message::Close(_)) {
                break;
            }
        }
    })
    .await;
}

/// One participant's conversation with the room, from `hello` to leaving.
async fn converse(state: AppState, sink: &mut Sink, stream: &mut Stream, caller: Caller) {
    let say = |value: Value| Message::Text(value.to_string().into());
    let Ok(Some(hello)) = tokio::time::timeout(HELLO_WITHIN, next_json(stream)).await else {
        return;
    };
    if hello["type"] != "hello" {
        let _ = sink
            .send(say(json!({"type": "error", "message": "say hello first"})))
            .await;
        return;
    }
    let Caller {
        tenant_id,
        appointment,
        host,
        ip,
    } = caller;
    let room = appointment.id.clone();
    let services = &state.services;
    let refused = match refusal(&appointment) {
        Some(reason) => Some(reason),
        None if appointment.has_password && host.is_none() => {
            // Each guess costs a password hash: guesses are limited per link
            // and per address before one is made.
            match state.limiters.check_call_password(&appointment.id, ip).await {
                Err(wait) => {
                    let refused = json!({"type": "refused", "reason": "rate_limited", "retryAfter": wait});
                    let _ = sink.send(say(refused)).await;
                    return;
                }
                Ok(()) => {
                    let given = hello["password"].as_str().unwrap_or_default();
                    match services
                        .appointment_password_matches(&tenant_id, &appointment.id, given)
                        .await
                    {
                        Ok(true) => None,
                        Ok(false) => {
                            state.limiters.call_password_failed(&appointment.id, ip).await;
                            Some("password")
                        }
                        Err(_) => Some("password"),
                    }
                }
            }
        }
        None => None,
    };
    if let Some(reason) = refused {
        let _ = sink.send(say(json!({"type": "refused", "reason": reason}))).await;
        return;
    }
    let name: String = hello["name"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_NAME)
        .collect();
    if name.is_empty() {
        let _ = sink.send(say(json!({"type": "refused", "reason": "name"}))).await;
        return;
    }

    let id = uuid::Uuid::new_v4().to_string();
    let actor = Actor {
        kind: if host.is_some() {
            ActorKind::User
        } else {
            ActorKind::Customer
        },
        id: host.clone().unwrap_or_default(),
        ip: Some(ip.to_string()),
        request_id: None,
    };
    let audit = |action: &'static str| {
        let services = services.clone();
        let (tenant_id, room, actor) = (tenant_id.clone(), room.clone(), actor.clone());
        async move {
            if let Err(e) = services
                .audit(Some(&tenant_id), &actor, action, "appointment", Some(&room))
                .await
            {
                tracing::warn!(error = %e, action, "conference: cannot audit");
            }
        }
    };
    let rooms = &state.conferences.rooms;
    // What the appointment lets guests do; hosts may do everything.
    let guests_may = Rights {
        screen_share: appointment.permissions.allow_screen_share,
        chat: appointment.permissions.allow_chat,
    };
    let rights = if host.is_some() { Rights::ALL } else { guests_may };
    let (tx, mut outbox) = mpsc::unbounded_channel::<Outgoing>();
    let waiting = appointment.permissions.enable_waiting_room && host.is_none();
    let entered = rooms.enter(
        &room,
        &tenant_id,
        appointment.record,
        Member {
            id: id.clone(),
            name,
            host: host.clone(),
            admitted: false,
            tx: tx.clone(),
        },
        !waiting,
    );
    if let Err(reason) = entered {
        let _ = sink.send(say(json!({"type": "refused", "reason": reason}))).await;
        return;
    }
    // The switch as it is now, read once the room is there to hear later
    // changes: it may have changed since this socket opened. The first one in
    // starts the recording when it is on.
    let _ = state.conferences.sfu().await; // which starts hearing the switch
    if let Ok(now) = services.get_appointment(&tenant_id, &room).await {
        rooms.set_recording(&room, &tenant_id, now.record);
    }
    state.conferences.sync_recording(&room, &tenant_id).await;
    if waiting {
        let _ = tx.send(Outgoing::say(json!({"type": "waiting"})));
    } else {
        let welcome = joined(
            &id,
            host.is_some(),
            rights,
            rooms.roster(&room),
            rooms.is_recording(&room),
        );
        let _ = tx.send(Outgoing::say(welcome));
        audit("conference.join").await;
    }
    rooms.announce(&room);

    // What the SFU says to this participant, in order.
    let (signal_tx, mut signals) = mpsc::unbounded_channel::<SignalOut>();
    let mut peer: Option<PeerKey> = None;
    let mut negotiation = 0;
    loop {
        tokio::select! {
            incoming = next_json(stream) => {
                let Some(message) = incoming else { break };
                let target = message["id"].as_str().unwrap_or_default().to_string();
                let is_host = rooms.is_host(&room, &id);
                match message["type"].as_str().unwrap_or_default() {
                    "offer" => {
                        let sdp = message["sdp"].as_str().unwrap_or_default().to_string();
                        let admitted = rooms.roster(&room).iter().any(|m| m.id == id);
                        if !admitted || sdp.is_empty() {
                            continue;
                        }
                        let sfu = match state.conferences.sfu().await {
                            Ok(sfu) => sfu,
                            Err(e) => {
                                tracing::error!(error = %e, "conference: the media server cannot start");
                                let _ = tx.send(Outgoing::say(json!({"type": "error", "message": "media is not available"})));
                                continue;
                            }
                        };
                        let sources = sources_of(&message);
                        let sent = match peer {
                            None => sfu
                                .join(&room, &id, sdp, sources, rights.max_video(), signal_tx.clone())
                                .await
                                .map(|key| peer = Some(key)),
                            Some(key) => sfu.offer(key, sdp, sources).await,
                        };
                        if sent.is_err() {
                            break;
                        }
                    }
                    "answer" => {
                        if let (Some(key), Some(sdp), Ok(sfu)) =
                            (peer, message["sdp"].as_str(), state.conferences.sfu().await)
                        {
                            let _ = sfu.answer(key, negotiation, sdp.to_string()).await;
                        }
                    }
                    "admit" if is_host && rooms.admit(&room, &target) => {
                        let welcome = joined(&target, false, guests_may, rooms.roster(&room), rooms.is_recording(&room));
                        rooms.tell(&room, &target, Outgoing::say(welcome));
                        audit("conference.admit").await;
                        rooms.announce(&room);
                    }
                    "decline" if is_host => {
                        if let (Some(guest), _) = rooms.take(&room, &target) {
                            let _ = guest.tx.send(Outgoing::last(json!({"type": "declined"})));
                            audit("conference.decline").await;
                            rooms.announce(&room);
                        }
                    }
                    "remove" if is_host && target != id => {
                        if let (Some(member), _) = rooms.take(&room, &target) {
                            let _ = member.tx.send(Outgoing::last(json!({"type": "removed"})));
                            if let Ok(sfu) = state.conferences.sfu().await {
                                let _ = sfu.remove_participant(&room, &target, "removed by the host").await;
                            }
                            state.conferences.left(&room, &target, false).await;
                            audit("conference.remove").await;
                            rooms.announce(&room);
                        }
                    }
                    "chat" => {
                        let text: String = message["text"].as_str().unwrap_or_default().trim().chars().take(MAX_CHAT).collect();
                        let admitted = rooms.roster(&room).iter().any(|m| m.id == id);
                        if !rights.chat {
                            let _ = tx.send(Outgoing::say(json!({"type": "error", "message": "chat is off in this call"})));
                        } else if admitted && !text.is_empty() {
                            rooms.chat(&room, &id, &text);
                        }
                    }
                    "leave" => break,
                    _ => {}
                }
            }
            out = outbox.recv() => {
                let Some(out) = out else { break };
                if sink.send(say(out.message)).await.is_err() || out.close {
                    break;
                }
            }
            signal = signals.recv() => {
                let Some(signal) = signal else { continue };
                let (message, last) = match signal {
                    SignalOut::Answer { sdp } => (json!({"type": "answer", "sdp": sdp}), false),
                    SignalOut::Offer { negotiation_id, sdp, tracks } => {
                        negotiation = negotiation_id;
                        let tracks: serde_json::Map<String, Value> = tracks
                            .into_iter()
                            .map(|t| (t.mid, json!({"participant": t.participant, "kind": t.kind, "source": t.source, "paused": t.paused})))
                            .collect();
                        (json!({"type": "offer", "sdp": sdp, "tracks": tracks}), false)
                    }
                    SignalOut::TrackState { mid, paused } => (json!({"type": "track", "mid": mid, "paused": paused}), false),
                    SignalOut::Removed { reason } => (json!({"type": "removed", "reason": reason}), true),
                    SignalOut::Error { message } => (json!({"type": "error", "message": message}), false),
                };
                if sink.send(say(message)).await.is_err() || last {
                    break;
                }
            }
        }
    }
    // Gone: out of the room and the SFU, and the others are told. The last
    // one out ends the conference, which the conference report counts.
    let (_, ended) = rooms.take(&room, &id);
    // Their recordings are finished; the room's too when it was the last one.
    state.conferences.left(&room, &id, ended.is_some()).await;
    if let Some(ended) = ended {
        if let Err(e) = services
            .record_conference(
                &tenant_id,
                &room,
                ended.started_at,
                ended.ended_at,
                ended.host.as_deref(),
                ended.participants,
            )
            .await
        {
            tracing::warn!(error = %e, "conference: cannot count it in the report");
        }
    }
    if let (Some(key), Ok(sfu)) = (peer, state.conferences.sfu().await) {
        let _ = sfu.leave(key).await;
    }
    rooms.announce(&room);
}

/// Longest chat message, in characters.
const MAX_CHAT: usize = 2000;

/// What a participant may do beyond seeing and hearing.
#[derive(Debug, Clone, Copy)]
struct Rights {
    screen_share: bool,
    chat: bool,
}

impl Rights {
    /// A host's.
    const ALL: Rights = Rights {
        screen_share: true,
        chat: true,
    };

    /// Video tracks forwarded: the camera, and a screen when sharing is allowed.
    fn max_video(self) -> usize {
        1 + usize::from(self.screen_share)
    }
}

/// The client's names of its m-lines (`sources: {mid: mic | camera | screen}`);
/// anything else is left out.
fn sources_of(message: &Value) -> HashMap<String, String> {
    message["sources"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(mid, source)| {
            let source = source.as_str()?;
            (mid.len() <= 16 && matches!(source, "mic" | "camera" | "screen"))
                .then(|| (mid.clone(), source.to_string()))
        })
        .collect()
}

/// The message that puts a participant in the call.
fn joined(you: &str, host: bool, rights: Rights, participants: Vec<super::rooms::Seen>, recording: bool) -> Value {
    json!({"type": "joined", "you": you, "host": host,
        "permissions": {"screenShare": rights.screen_share, "chat": rights.chat},
        "participants": participants, "recording": recording})
}
