//! What the dashboard's player reads of a recorded session, with the
//! dashboard's own credentials (no API key):
//!
//! - `GET /sessions/{id}/events`: every event, for the replay, for a signed-in
//!   agent (or higher) of the session's tenant;
//! - `GET /sessions/{id}/live`: the live view, as server-sent events (`events`,
//!   data: a JSON array of rrweb events, in order), for such an agent or for the
//!   holder of a live-view grant for this very session (an opened live-view
//!   link). Connecting marks the session watched, which makes the visitor script
//!   take a full snapshot and stream; the viewer renews it while connected.
//!   Batches stored through another instance arrive through the live relay.
//!   `ended` (data `{}`) says the session ended (30 quiet minutes), then the
//!   stream closes; a viewer of a session that ended hears only that.
//!   `cobrowse` events (data `{"state": "requested"|"active"|"declined"|"ended",
//!   "control": bool, "agentId": …}`) tell the agent who asked where their
//!   co-browse with the visitor stands (other viewers hear nothing of it);
//!   that agent's live view keeps it going, and about 30 s after the view's
//!   last renewal, once it closed for good, the co-browse ends;
//! - `POST /sessions/{id}/cobrowse`: a signed-in agent's co-browse with the
//!   visitor (`request`, `pointer`, `highlight`, `click`, `type`, `key`,
//!   `scroll`, `end`), relayed to the visitor's page. A live-view grant does not
//!   reach it: the link names watching, not browsing along.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{Path, State},
    http::{header, HeaderMap, StatusCode},
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
};
use futures_util::stream;
use rapport_app::ssr::{cookie_value, LIVEVIEW_COOKIE};
use rapport_core::{
    audit::{Actor, ActorKind},
    cobrowsing::AGENT_GONE_MS,
    error::CoreError,
    ids::TenantId,
    live::{LiveEvent, Room},
    model::Role,
    time::now_ms,
    Services,
};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::{
    http::{client_ip::ClientIp, dashboard_user::dashboard_user, error::ApiError, extract::parse_json},
    state::AppState,
};

/// How often a connected viewer renews its watch (well within `WATCH_MS`)
/// and the agent's co-browse (well within `AGENT_GONE_MS`).
const RENEW: Duration = Duration::from_secs(10);
/// How long after its agent's live view closed a co-browse is checked for an
/// agent who did not come back: just past `AGENT_GONE_MS`.
const AGENT_GONE: Duration = Duration::from_millis(AGENT_GONE_MS as u64 + 1_000);

/// The tenant of the signed-in agent (or higher), or the answer to give.
async fn agent_tenant(services: &Services, headers: &HeaderMap) -> Result<TenantId, Response> {
    agent(services, headers).await.map(|user| user.tenant_id)
}

/// The signed-in agent (or higher), or the answer to give.
async fn agent(services: &Services, headers: &HeaderMap) -> Result<rapport_core::model::SessionUser, Response> {
    dashboard_user(services, headers, Role::Agent)
        .await
        .map_err(IntoResponse::into_response)
}

/// Stored batches a live view reads per query.
const LIVE_PAGE: i64 = 8;

/// `GET /sessions/{id}/events`: the replay, streamed.
pub async fn events(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let tenant_id = match agent_tenant(&state.services, &headers).await {
        Ok(t) => t,
        Err(answer) => return answer,
    };
    match state.services.recording_replay(&tenant_id, &id).await {
        Ok(replay) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            replay_body(replay),
        )
            .into_response(),
        Err(CoreError::NotFound(_)) => (StatusCode::NOT_FOUND, "no such session").into_response(),
        Err(err) => {
            tracing::error!(error = %err, "reading a recording failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

/// A replay as a response body, sent piece by piece as it is read. A failure
/// half-way is logged and ends the body early: the client sees a damaged array.
pub fn replay_body(replay: rapport_core::recordings::Replay) -> axum::body::Body {
    let pieces = stream::unfold(replay, |mut replay| async move {
        match replay.next_piece().await {
            Ok(Some(piece)) => Some((Ok(axum::body::Bytes::from(piece)), replay)),
            Ok(None) => None,
            Err(err) => {
                tracing::error!(error = %err, "reading a recording failed");
                Some((Err(std::io::Error::other("reading a recording failed")), replay))
            }
        }
    });
    // Fused: a compressing body polls once more after the end, which a bare
    // `unfold` does not allow.
    axum::body::Body::from_stream(futures_util::StreamExt::fuse(pieces))
}

/// `GET /sessions/{id}/live`.
pub async fn live(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let services = state.services.clone();
    // A live-view grant counts for its own session only; else the dashboard user.
    let granted = match cookie_value(&headers, LIVEVIEW_COOKIE) {
        Some(grant) => services.liveview_grant(&grant, &id).await.ok().map(|g| g.tenant_id),
        None => None,
    };
    // The signed-in agent watching, if any: while they watch, a co-browse they
    // asked for goes on (a grant's holder who is also signed in is that agent).
    let via_link = granted.is_some();
    let (tenant_id, agent_id) = match granted {
        Some(t) => {
            let user = agent(&services, &headers).await.ok();
            let agent_id = user.filter(|u| u.tenant_id == t).map(|u| u.id);
            (t, agent_id)
        }
        None => match agent(&services, &headers).await {
            Ok(user) => (user.tenant_id, Some(user.id)),
            Err(answer) => return answer,
        },
    };
    // A live view opened through a link is a public page's stream (the link may
    // be handed on): it counts toward the tenant's open streams. A signed-in
    // agent's own view does not, as their inbox stream does not.
    let slot = if via_link {
        match services.open_public_stream(&tenant_id).await {
            Ok(slot) => Some(slot),
            Err(err) => return ApiError::from(err).into_response(),
        }
    } else {
        None
    };
    let mut heard = services.live().subscribe(Room::Recording {
        tenant_id: tenant_id.clone(),
        session_id: id.clone(),
    });
    match services.recording_ended(&tenant_id, &id).await {
        // Nothing more will come: say so at once (the replay shows the rest).
        Ok(true) => {
            let ended = stream::once(async { Ok::<_, Infallible>(Event::default().event("ended").data("{}")) });
            return Sse::new(ended).into_response();
        }
        Ok(false) => {}
        Err(err) => return internal(err),
    }
    // Only what is stored from now on: the script takes a full snapshot for
    // this viewer, so nothing earlier is needed.
    let mut cursor = match services.recording_last_seq(&tenant_id, &id).await {
        Ok(seq) => seq,
        Err(err) => return internal(err),
    };
    match services.watch_recording(&tenant_id, &id, true).await {
        Ok(()) => {}
        Err(CoreError::NotFound(_)) => return (StatusCode::NOT_FOUND, "no such session").into_response(),
        Err(err) => return internal(err),
    }
    // The viewer's co-browse asked for or going on: where it stands, for
    // their page. Other viewers are not told of it: it is not theirs to act in.
    let cobrowse = match services.script_cobrowse(&tenant_id, &id).await {
        Ok(current) => current
            .filter(|c| c.state.open() && agent_id.as_deref().is_some_and(|a| c.is_agent(a)))
            .map(|c| c.agent_view()),
        Err(err) => return internal(err),
    };
    let (tx, rx) = mpsc::channel::<Result<Event, Infallible>>(64);
    if let Some(state) = cobrowse {
        let _ = tx.try_send(Ok(Event::default().event("cobrowse").data(state)));
    }
    agent_present(&services, &tenant_id, &id, agent_id.as_deref()).await;
    tokio::spawn(async move {
        let mut renew = tokio::time::interval(RENEW);
        renew.tick().await;
        'stream: loop {
            // What to do: read new batches, and whether the session is known to
            // have ended or should be asked (an `ended` announcement can be
            // missed: a lagging receiver, another instance's relay remade, or
            // the session ending before this viewer marked it watched).
            let (fresh, mut ended, ask) = tokio::select! {
                _ = tx.closed() => break,
                _ = renew.tick() => {
                    if services.watch_recording(&tenant_id, &id, false).await.is_err() {
                        break;
                    }
                    agent_present(&services, &tenant_id, &id, agent_id.as_deref()).await;
                    (true, false, true)
                }
                // The session's room: its batches, its end and its co-browse.
                update = heard.recv() => match &update.event {
                    LiveEvent::RecordingChunk { .. } => (true, false, false),
                    LiveEvent::RecordingEnded { .. } => (true, true, false),
                    LiveEvent::Cobrowse { to_visitor: false, data, .. } if for_agent(data, agent_id.as_deref()) => {
                        if tx.send(Ok(Event::default().event("cobrowse").data(data.clone()))).await.is_err() {
                            break 'stream;
                        }
                        (false, false, false)
                    }
                    // Fell behind, or another instance's changes were missed:
                    // read whatever is new.
                    LiveEvent::Resync => (true, false, true),
                    _ => (false, false, false),
                },
            };
            if !fresh {
                continue;
            }
            if ask {
                ended = services.recording_ended(&tenant_id, &id).await.unwrap_or(false);
            }
            // A few batches at a time, so a viewer far behind never holds the
            // whole session in memory.
            loop {
                let batches = match services.recording_batches(&tenant_id, &id, cursor, LIVE_PAGE).await {
                    Ok(b) => b,
                    Err(err) => {
                        tracing::error!(error = %err, "live view: reading a batch failed");
                        break 'stream;
                    }
                };
                let more = batches.len() as i64 == LIVE_PAGE;
                for (seq, json) in batches {
                    cursor = Some(seq);
                    let data = String::from_utf8_lossy(&json).into_owned();
                    if tx.send(Ok(Event::default().event("events").data(data))).await.is_err() {
                        break 'stream;
                    }
                }
                if !more {
                    break;
                }
            }
            if ended {
                let _ = tx.send(Ok(Event::default().event("ended").data("{}"))).await;
                break;
            }
        }
        // The viewer left. Were they the agent co-browsing, and do they not
        // come back (a reload reconnects at once, maybe to another instance),
        // the co-browse ends rather than leave the visitor with nobody there.
        drop((tx, slot));
        if agent_id.is_some() {
            tokio::time::sleep(AGENT_GONE).await;
            if let Err(err) = services.end_cobrowse_if_agent_gone(&tenant_id, &id, now_ms()).await {
                tracing::warn!(error = %err, "live view: ending an abandoned co-browse failed");
            }
        }
    });
    Sse::new(ReceiverStream::new(rx))
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// Whether a co-browse's state (its `agentId`) is for the agent watching.
fn for_agent(data: &str, agent_id: Option<&str>) -> bool {
    let Some(agent_id) = agent_id else { return false };
    serde_json::from_str::<serde_json::Value>(data).is_ok_and(|v| v["agentId"].as_str() == Some(agent_id))
}

/// The agent watching is there: a co-browse they asked for goes on.
async fn agent_present(services: &Services, tenant_id: &TenantId, id: &str, agent_id: Option<&str>) {
    let Some(agent_id) = agent_id else { return };
    if let Err(err) = services
        .cobrowse_agent_present(tenant_id, id, &rapport_core::ids::UserId::from(agent_id))
        .await
    {
        tracing::warn!(error = %err, "live view: renewing the agent's co-browse failed");
    }
}

/// An agent's co-browse message (README, "Co-browsing on sites with the script").
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
enum AgentCobrowse {
    /// Ask the visitor.
    Request,
    /// The agent's pointer, in the visitor's viewport (`null`: it left).
    Pointer { x: Option<f64>, y: Option<f64> },
    /// A ring flashes there.
    Highlight { x: f64, y: f64 },
    /// A click there (control only).
    Click { x: f64, y: f64 },
    /// Text typed into the visitor's focused field (control only).
    Type { text: String },
    /// A special key (control only).
    Key { key: String },
    /// Scrolls the visitor's window (control only).
    Scroll { delta_x: f64, delta_y: f64 },
    /// End it.
    End,
}

/// `POST /sessions/{id}/cobrowse`: 204, or a problem: 409 `not_active` when no
/// co-browse goes on, 409 `no_control` for acting without the visitor's leave.
pub async fn cobrowse(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let user = match agent(&state.services, &headers).await {
        Ok(user) => user,
        Err(answer) => return answer,
    };
    let message: AgentCobrowse = match parse_json(&body) {
        Ok(m) => m,
        Err(e) => return e.into_response(),
    };
    let actor = Actor {
        kind: ActorKind::User,
        id: user.id.to_string(),
        ip: Some(client.to_string()),
        request_id: None,
    };
    let fine = |v: f64| v.is_finite() && v.abs() <= 100_000.0;
    let services = &state.services;
    let tenant = &user.tenant_id;
    // Only the fields named here reach the visitor's page.
    let relayed = match message {
        AgentCobrowse::Request => services.request_script_cobrowse(tenant, &id, &actor).await,
        AgentCobrowse::End => services.end_script_cobrowse(tenant, &id, &actor).await,
        AgentCobrowse::Pointer { x, y } if x.is_none_or(fine) && y.is_none_or(fine) => {
            let data = json!({"type": "pointer", "x": x, "y": y}).to_string();
            services.relay_to_visitor(tenant, &id, &user.id, false, data).await
        }
        AgentCobrowse::Highlight { x, y } if fine(x) && fine(y) => {
            let data = json!({"type": "highlight", "x": x, "y": y}).to_string();
            services.relay_to_visitor(tenant, &id, &user.id, false, data).await
        }
        AgentCobrowse::Click { x, y } if fine(x) && fine(y) => {
            let data = json!({"type": "click", "x": x, "y": y}).to_string();
            services.relay_to_visitor(tenant, &id, &user.id, true, data).await
        }
        AgentCobrowse::Type { text } if !text.is_empty() && text.len() <= 1000 => {
            let data = json!({"type": "type", "text": text}).to_string();
            services.relay_to_visitor(tenant, &id, &user.id, true, data).await
        }
        AgentCobrowse::Key { key } if !key.is_empty() && key.len() <= 32 => {
            let data = json!({"type": "key", "key": key}).to_string();
            services.relay_to_visitor(tenant, &id, &user.id, true, data).await
        }
        AgentCobrowse::Scroll { delta_x, delta_y } if fine(delta_x) && fine(delta_y) => {
            let data = json!({"type": "scroll", "deltaX": delta_x, "deltaY": delta_y}).to_string();
            services.relay_to_visitor(tenant, &id, &user.id, true, data).await
        }
        _ => Err(CoreError::invalid(
            "type",
            "out_of_range",
            "coordinates must be finite, text at most 1000 characters and keys at most 32",
        )),
    };
    match relayed {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => ApiError::from(e).into_response(),
    }
}

fn internal(err: CoreError) -> Response {
    tracing::error!(error = %err, "live view failed");
    StatusCode::INTERNAL_SERVER_ERROR.into_response()
}
