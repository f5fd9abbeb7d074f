//! A real HTTP server that receives webhooks: it records every request and answers
//! from a script (then 200).

use std::{
    collections::VecDeque,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{body::Bytes, extract::State, http::HeaderMap, response::IntoResponse, routing::post, Router};
use reqwest::StatusCode;
use serde_json::Value;
use tokio::{net::TcpListener, sync::Notify};

/// One received request.
#[derive(Debug, Clone)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
    pub at: Instant,
}

impl Received {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
    }

    pub fn event_type(&self) -> &str {
        self.header("rapport-event-type")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    /// Verifies the Standard Webhooks signature with the published crate.
    #[track_caller]
    pub fn verify(&self, secret: &str) {
        standardwebhooks::Webhook::new(secret)
            .unwrap()
            .verify(&self.body, &self.headers)
            .unwrap_or_else(|e| panic!("signature does not verify: {e:?}; headers {:?}", self.headers));
    }
}

/// How the receiver answers one request.
#[derive(Debug, Clone)]
pub enum Reply {
    Status(u16),
    RetryAfter(u16, u64),
}

#[derive(Default)]
struct Inner {
    delay: Duration,
    received: Mutex<Vec<Received>>,
    script: Mutex<VecDeque<Reply>>,
    arrived: Notify,
}

/// The receiver; stops when dropped.
pub struct Receiver {
    pub url: String,
    inner: Arc<Inner>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        Self::start_with_delay(Duration::ZERO).await
    }

    /// A receiver that takes `delay` to answer each request.
    pub async fn start_with_delay(delay: Duration) -> Receiver {
        let inner = Arc::new(Inner {
            delay,
            ..Inner::default()
        });
        let router = Router::new().route("/hook", post(hook)).with_state(inner.clone());
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            axum::serve(listener, router).await.unwrap();
        });
        Receiver { url, inner, task }
    }

    /// The next answers, in order; after them, 200.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.inner.script.lock().unwrap().extend(replies);
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }

    /// Waits until `n` requests have arrived (at most `limit`).
    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Received> {
        let deadline = Instant::now() + limit;
        loop {
            let notified = self.inner.arrived.notified();
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || tokio::time::timeout(left, notified).await.is_err() {
                let got = self.received();
                assert!(
                    got.len() >= n,
                    "expected {n} deliveries, got {}: {:?}",
                    got.len(),
                    got.iter().map(|r| r.event_type().to_string()).collect::<Vec<_>>()
                );
                return got;
            }
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn hook(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> impl IntoResponse {
    inner.received.lock().unwrap().push(Received {
        headers,
        body,
        at: Instant::now(),
    });
    inner.arrived.notify_waiters();
    if !inner.delay.is_zero() {
        tokio::time::sleep(inner.delay).await;
    }
    let reply = inner.script.lock().unwrap().pop_front();
    match reply {
        None => (StatusCode::OK, HeaderMap::new(), "ok").into_response(),
        Some(Reply::Status(s)) => (StatusCode::from_u16(s).unwrap(), format!("scripted {s}")).into_response(),
        Some(Reply::RetryAfter(s, secs)) => (
            StatusCode::from_u16(s).unwrap(),
            [("retry-after", secs.to_string())],
            format!("scripted {s}, retry after {secs}"),
        )
            .into_response(),
    }
}
