//! A thin client of the Chrome DevTools Protocol, over the browser's WebSocket.
//!
//! Co-browsing needs a dozen commands (screencast, input, navigation, a few
//! settings) and a handful of events. The generated Rust clients type all of
//! the protocol and lag Chromium: `chromiumoxide` fails on messages newer than
//! its types, and `headless_chrome` is synchronous. Here commands and events are
//! plain JSON (`serde_json::Value`), so a field Chromium adds or drops never
//! breaks a session, and what is read is read where it is used.
//!
//! One connection carries the browser and every page attached to it in
//! "flattened" mode: a command or event names its page by `sessionId`.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

/// A command that takes longer than this has failed (the browser hangs).
const CALL_TIMEOUT: Duration = Duration::from_secs(15);

/// A CDP event: `method`, `params` and the page session it came from.
#[derive(Debug, Clone)]
pub struct CdpEvent {
    /// The page's session id; `None` for the browser's own events.
    pub session_id: Option<String>,
    /// E.g. `Page.screencastFrame`.
    pub method: String,
    /// The event's parameters.
    pub params: Value,
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>>;

/// A connection to a browser's DevTools endpoint. Cheap to clone.
#[derive(Clone)]
pub struct Cdp {
    outgoing: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: Arc<AtomicU64>,
}

impl Cdp {
    /// Connects to `ws_url` (the browser's `DevTools listening on …`); events
    /// arrive on the receiver, which closes when the browser goes away.
    pub async fn connect(ws_url: &str) -> anyhow::Result<(Cdp, mpsc::UnboundedReceiver<CdpEvent>)> {
        let mut config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default();
        // Screencast frames of a large page come base64-encoded in one message.
        config.max_message_size = Some(64 << 20);
        config.max_frame_size = Some(64 << 20);
        let (socket, _) = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), false).await?;
        let (mut sink, mut stream) = socket.split();
        let (outgoing, mut to_send) = mpsc::unbounded_channel::<String>();
        let (events, heard) = mpsc::unbounded_channel();
        let pending: Pending = Arc::default();
        tokio::spawn(async move {
            while let Some(text) = to_send.recv().await {
                if sink.send(Message::text(text)).await.is_err() {
                    break;
                }
            }
            let _ = sink.close().await;
        });
        let waiting = pending.clone();
        tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                let Message::Text(text) = message else { continue };
                let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
                    continue;
                };
                if let Some(id) = value.get("id").and_then(Value::as_u64) {
                    let answer = match value.get_mut("error") {
                        Some(error) => Err(error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("the browser refused the command")
                            .to_string()),
                        None => Ok(value.get_mut("result").map(Value::take).unwrap_or(Value::Null)),
                    };
                    if let Some(reply) = waiting.lock().expect("pending lock").remove(&id) {
                        let _ = reply.send(answer);
                    }
                } else if let Some(method) = value.get("method").and_then(Value::as_str) {
                    let event = CdpEvent {
                        method: method.to_string(),
                        session_id: value.get("sessionId").and_then(Value::as_str).map(str::to_string),
                        params: value.get_mut("params").map(Value::take).unwrap_or(Value::Null),
                    };
                    if events.send(event).is_err() {
                        break;
                    }
                }
            }
            // The browser is gone: whoever waits for an answer hears so.
            waiting.lock().expect("pending lock").clear();
        });
        Ok((
            Cdp {
                outgoing,
                pending,
                next_id: Arc::new(AtomicU64::new(1)),
            },
            heard,
        ))
    }

    /// Sends a command to the browser (`session` `None`) or a page, and waits
    /// for its result.
    pub async fn call(&self, session: Option<&str>, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut command = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            command["sessionId"] = json!(session);
        }
        let (reply, answer) = oneshot::channel();
        self.pending.lock().expect("pending lock").insert(id, reply);
        if self.outgoing.send(command.to_string()).is_err() {
            self.pending.lock().expect("pending lock").remove(&id);
            return Err("the browser is gone".into());
        }
        match tokio::time::timeout(CALL_TIMEOUT, answer).await {
            Ok(Ok(result)) => result.map_err(|e| format!("{method}: {e}")),
            Ok(Err(_)) => Err("the browser is gone".into()),
            Err(_) => {
                self.pending.lock().expect("pending lock").remove(&id);
                Err(format!("{method} got no answer in {} s", CALL_TIMEOUT.as_secs()))
            }
        }
    }

    /// Sends a command whose answer nobody needs (input, acknowledgements):
    /// the session's loop must not wait a round trip for each.
    pub fn send(&self, session: Option<&str>, method: &str, params: Value) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut command = json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            command["sessionId"] = json!(session);
        }
        let _ = self.outgoing.send(command.to_string());
    }
}
