//! One universal co-browsing session: its browser, and the task that owns it.
//!
//! The task alone talks to the browser and keeps the session's state (who is
//! here, who holds control, where the page is). Participants send it commands;
//! it answers each with text messages on the participant's own queue, and
//! publishes screencast frames on a `watch` channel, which keeps only the
//! newest: a participant on a slow link skips frames instead of falling behind.
//! Anything slow (a lookup before navigating, the history after a navigation)
//! runs in a task of its own and comes back as an [`Update`], so input and
//! frames never wait for a page to load.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::body::Bytes;
use rapport_core::{
    audit::Actor,
    cobrowsing::UniversalEnd,
    links::{CobrowseRole, CobrowseSession},
    time::now_ms,
    Services,
};
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use super::{
    cdp::{Cdp, CdpEvent},
    chromium::Browser,
    protocol::{self, ClientMessage, ParticipantView, StateView},
    proxy::{self, Refusal},
    CobrowseSettings,
};

mod page;
mod said;
mod screen;

/// How often the task checks idleness and the links' validity.
const TICK: Duration = Duration::from_secs(1);
/// How often the instance renews its claim on the session.
const RENEW: Duration = Duration::from_secs(10);
/// Queued text messages per participant; past it the participant is too slow
/// and is dropped (its page reconnects and gets the state again).
const QUEUE: usize = 256;

/// Why a participant could not join a running session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinError {
    /// The session has just ended.
    Ended,
    /// It holds as many people as its tenant allows (the host always gets in).
    Full(usize),
}

/// What the session answers a join: the participant's id, `welcome` and queue.
type JoinReply = Result<(String, String, mpsc::Receiver<Arc<str>>), JoinError>;

/// A participant's way into a running session.
#[derive(Clone)]
pub struct SessionHandle {
    commands: mpsc::Sender<Command>,
    frames: watch::Receiver<Option<Bytes>>,
    /// Why the session ended, once it has.
    ended: watch::Receiver<Option<String>>,
}

impl SessionHandle {
    /// Why the session ended (`idle`, `ended_by_host`, …), if it has.
    pub fn ended(&self) -> Option<String> {
        self.ended.borrow().clone()
    }

    /// Joins as `role`.
    pub async fn join(&self, role: CobrowseRole, actor: Actor) -> Result<Joined, JoinError> {
        let (reply, answer) = oneshot::channel();
        self.commands
            .send(Command::Join { role, actor, reply })
            .await
            .map_err(|_| JoinError::Ended)?;
        let (id, welcome, texts) = answer.await.map_err(|_| JoinError::Ended)??;
        Ok(Joined {
            id,
            welcome,
            texts,
            frames: self.frames.clone(),
            commands: self.commands.clone(),
        })
    }

    /// Ends the session (the server shuts down) and waits until it has.
    pub async fn shut_down(&self) {
        let _ = self.commands.send(Command::Shutdown).await;
        let mut ended = self.ended.clone();
        let _ = ended.wait_for(Option::is_some).await;
    }
}

/// A participant who joined.
pub struct Joined {
    /// Their id (`p1`, …).
    pub id: String,
    /// The `welcome` message.
    pub welcome: String,
    /// Text messages for them; closes when the session ends.
    pub texts: mpsc::Receiver<Arc<str>>,
    /// The newest frame.
    pub frames: watch::Receiver<Option<Bytes>>,
    commands: mpsc::Sender<Command>,
}

impl Joined {
    /// Passes on what the participant said.
    pub async fn said(&self, message: ClientMessage) {
        let _ = self
            .commands
            .send(Command::Said {
                from: self.id.clone(),
                message,
            })
            .await;
    }

    /// The participant left.
    pub async fn left(&self) {
        let _ = self.commands.send(Command::Left { id: self.id.clone() }).await;
    }
}

enum Command {
    Join {
        role: CobrowseRole,
        actor: Actor,
        reply: oneshot::Sender<JoinReply>,
    },
    Said {
        from: String,
        message: ClientMessage,
    },
    Left {
        id: String,
    },
    Shutdown,
}

/// What a side task found out.
enum Update {
    Notice(&'static str, String),
    History {
        url: String,
        title: String,
        back: bool,
        forward: bool,
    },
    /// A screenshot of the page, asked for when it had loaded at `captured_at`.
    Screenshot {
        captured_at: f64,
        jpeg: Bytes,
    },
}

struct Peer {
    id: String,
    name: String,
    role: CobrowseRole,
    queue: mpsc::Sender<Arc<str>>,
}

/// Starts the browser for `info` and the task that runs the session; the task
/// removes the session from `registry` when it ends.
pub async fn start(
    info: CobrowseSession,
    settings: Arc<CobrowseSettings>,
    chromium: &super::chromium::Launcher,
    services: Services,
    registry: Arc<Mutex<HashMap<String, SessionHandle>>>,
    max_people: usize,
) -> anyhow::Result<SessionHandle> {
    let (refused, refusals) = mpsc::unbounded_channel();
    let (proxy_addr, proxy_task) = proxy::start(settings.allowed.clone(), refused).await?;
    let browser = match chromium.launch(proxy_addr, settings.width, settings.height).await {
        Ok(b) => b,
        Err(e) => {
            proxy_task.abort();
            return Err(e);
        }
    };
    let connected = match Cdp::connect(&browser.ws_url).await {
        Ok((cdp, events)) => page::open_page(&cdp, &settings, proxy_addr)
            .await
            .map(|page| (cdp, events, page)),
        Err(e) => Err(e.to_string()),
    };
    let (cdp, events, page) = match connected {
        Ok(set_up) => set_up,
        Err(e) => {
            browser.close().await;
            proxy_task.abort();
            anyhow::bail!("setting the browser up failed: {e}");
        }
    };
    let (commands, inbox) = mpsc::channel(1024);
    let (frames_tx, frames) = watch::channel(None);
    let (ended_tx, ended) = watch::channel(None);
    let handle = SessionHandle {
        commands,
        frames,
        ended,
    };
    let (updates_tx, updates) = mpsc::unbounded_channel();
    let mut task = Session {
        state: StateView {
            url: info.url.clone(),
            ends_at: info.expires_at.to_rfc3339(),
            ..StateView::default()
        },
        info,
        settings,
        services,
        cdp,
        page: page.session,
        target: page.target,
        peers: Vec::new(),
        max_people,
        next_peer: 1,
        guests: 0,
        buttons: 0,
        screen: screen::Screen::new(frames_tx),
        updates: updates_tx,
        last_activity: Instant::now(),
        started_at: now_ms(),
    };
    let first = task.info.url.clone();
    task.navigate(first);
    tokio::spawn(async move {
        let reason = task.run(inbox, events, refusals, updates).await;
        // Who arrives from now on hears why it ended; the session stays in the
        // registry until it is recorded as ended, so nobody starts it again.
        ended_tx.send_replace(Some(reason.clone()));
        task.finish(&reason, browser).await;
        proxy_task.abort();
        registry.lock().expect("registry lock").remove(&task.info.session_id);
    });
    Ok(handle)
}

struct Session {
    info: CobrowseSession,
    settings: Arc<CobrowseSettings>,
    services: Services,
    cdp: Cdp,
    /// The shared page's DevTools session.
    page: String,
    /// The shared page's target id.
    target: String,
    state: StateView,
    peers: Vec<Peer>,
    /// People at most, the host included (the tenant's `cobrowseParticipants`):
    /// each pulls the screencast, so a link handed round cannot make the
    /// server stream to a crowd. The host always gets in.
    max_people: usize,
    next_peer: u32,
    guests: i64,
    /// Mouse buttons held down by whoever has control (CDP's `buttons` mask).
    buttons: i64,
    screen: screen::Screen,
    updates: mpsc::UnboundedSender<Update>,
    last_activity: Instant,
    started_at: i64,
}

impl Session {
    /// Runs until the session ends; returns why.
    async fn run(
        &mut self,
        mut inbox: mpsc::Receiver<Command>,
        mut events: mpsc::UnboundedReceiver<CdpEvent>,
        mut refusals: mpsc::UnboundedReceiver<Refusal>,
        mut updates: mpsc::UnboundedReceiver<Update>,
    ) -> String {
        let mut tick = tokio::time::interval(TICK);
        let mut renew = tokio::time::interval(RENEW);
        let expires = self.info.expires_at.timestamp_millis();
        loop {
            tokio::select! {
                command = inbox.recv() => match command {
                    Some(Command::Join { role, actor, reply }) => self.join(role, actor, reply),
                    Some(Command::Said { from, message }) => {
                        self.last_activity = Instant::now();
                        if let Some(reason) = self.said(&from, message) {
                            return reason;
                        }
                    }
                    Some(Command::Left { id }) => self.leave(&id),
                    Some(Command::Shutdown) | None => return "shutdown".into(),
                },
                event = events.recv() => match event {
                    Some(event) => if let Some(reason) = self.event(event) {
                        return reason;
                    },
                    None => return "browser_crashed".into(),
                },
                Some(refusal) = refusals.recv() => self.broadcast(&protocol::notice(
                    "navigation_refused",
                    &format!("Rapport refused to open {}: it is on a private or local network.", refusal.host),
                )),
                Some(update) = updates.recv() => match update {
                    Update::Notice(code, message) => self.broadcast(&protocol::notice(code, &message)),
                    Update::History { url, title, back, forward } => {
                        self.state.url = url;
                        self.state.title = title;
                        self.state.can_go_back = back;
                        self.state.can_go_forward = forward;
                        self.send_state();
                    }
                    Update::Screenshot { captured_at, jpeg } => {
                        self.screen.offer(Some(captured_at), jpeg);
                    }
                },
                _ = tick.tick() => {
                    if now_ms() >= expires {
                        return "expired".into();
                    }
                    if self.last_activity.elapsed() >= self.settings.idle {
                        return "idle".into();
                    }
                }
                _ = renew.tick() => {
                    let (services, id, url) = (self.services.clone(), self.info.session_id.clone(), self.settings.instance_url.clone());
                    tokio::spawn(async move {
                        if let Err(e) = services.renew_cobrowse(&id, &url).await {
                            tracing::warn!(error = %e, "renewing a co-browsing claim failed");
                        }
                    });
                }
            }
        }
    }

    fn join(&mut self, role: CobrowseRole, actor: Actor, reply: oneshot::Sender<JoinReply>) {
        if role == CobrowseRole::Guest && self.peers.len() >= self.max_people {
            let _ = reply.send(Err(JoinError::Full(self.max_people)));
            return;
        }
        self.last_activity = Instant::now();
        let id = format!("p{}", self.next_peer);
        self.next_peer += 1;
        let name = match role {
            CobrowseRole::Host => self.info.host_name.clone().unwrap_or_else(|| "Host".into()),
            CobrowseRole::Guest => {
                self.guests += 1;
                format!("Guest {}", self.guests)
            }
        };
        let (queue, texts) = mpsc::channel(QUEUE);
        let welcome = json!({
            "type": "welcome",
            "you": id,
            "role": role_name(role),
            "name": name,
            "viewport": {"width": self.settings.width, "height": self.settings.height},
        })
        .to_string();
        if reply.send(Ok((id.clone(), welcome, texts))).is_err() {
            return;
        }
        self.peers.push(Peer {
            id: id.clone(),
            name,
            role,
            queue,
        });
        // The host holds control unless they handed it to someone still here.
        let holder_here = self
            .state
            .control
            .as_ref()
            .is_some_and(|c| self.peers.iter().any(|p| &p.id == c));
        if role == CobrowseRole::Host && !holder_here {
            self.state.control = Some(id);
        }
        self.send_state();
        let (services, tenant, session) = (
            self.services.clone(),
            self.info.tenant_id.clone(),
            self.info.session_id.clone(),
        );
        tokio::spawn(async move {
            if let Err(e) = services
                .audit_cobrowse(&tenant, &session, &actor, "cobrowse.join")
                .await
            {
                tracing::warn!(error = %e, "auditing a co-browsing join failed");
            }
        });
    }

    fn leave(&mut self, id: &str) {
        self.peers.retain(|p| p.id != id);
        if self.state.control.as_deref() == Some(id) {
            self.buttons = 0;
            self.state.control = self
                .peers
                .iter()
                .find(|p| p.role == CobrowseRole::Host)
                .map(|p| p.id.clone());
        }
        self.broadcast(&json!({"type": "pointer", "id": id, "x": null, "y": null}).to_string());
        self.send_state();
    }

    fn send_state(&mut self) {
        self.state.participants = self
            .peers
            .iter()
            .map(|p| ParticipantView {
                id: p.id.clone(),
                name: p.name.clone(),
                role: role_name(p.role),
            })
            .collect();
        let mut message = serde_json::to_value(&self.state).unwrap_or_default();
        message["type"] = json!("state");
        self.broadcast(&message.to_string());
    }

    fn broadcast(&mut self, text: &str) {
        self.broadcast_except("", text);
    }

    /// Queues `text` for everyone but `except`; a participant whose queue is
    /// full is dropped (a pointer move is simply skipped).
    fn broadcast_except(&mut self, except: &str, text: &str) {
        let text: Arc<str> = Arc::from(text);
        let pointer = text.starts_with(r#"{"type":"pointer""#);
        let mut slow = Vec::new();
        for peer in self.peers.iter().filter(|p| p.id != except) {
            if let Err(mpsc::error::TrySendError::Full(_)) = peer.queue.try_send(text.clone()) {
                if !pointer {
                    slow.push(peer.id.clone());
                }
            }
        }
        self.peers.retain(|p| !slow.contains(&p.id));
    }

    fn tell(&self, id: &str, text: &str) {
        if let Some(peer) = self.peers.iter().find(|p| p.id == id) {
            let _ = peer.queue.try_send(Arc::from(text));
        }
    }

    /// Tells everyone why it ended, closes the browser (its profile goes with
    /// it) and records the session.
    async fn finish(&mut self, reason: &str, browser: Browser) {
        // Recorded first: once participants hear of the end, its links say so.
        let end = UniversalEnd {
            tenant_id: self.info.tenant_id.clone(),
            session_id: self.info.session_id.clone(),
            reason: reason.to_string(),
            started_at: self.started_at,
            host_user_id: self.info.host_user_id.clone(),
            guests: self.guests,
        };
        if let Err(e) = self.services.end_cobrowse(&end).await {
            tracing::error!(error = %e, "recording the end of a co-browsing session failed");
        }
        self.broadcast(&protocol::ended(reason));
        self.peers.clear();
        let _ = tokio::time::timeout(Duration::from_secs(2), self.cdp.call(None, "Browser.close", json!({}))).await;
        browser.close().await;
        tracing::info!(session = %self.info.session_id, reason, "co-browsing session ended");
    }
}

fn role_name(role: CobrowseRole) -> &'static str {
    match role {
        CobrowseRole::Host => "host",
        CobrowseRole::Guest => "guest",
    }
}
