//! Co-browsing over HTTP and WebSocket, on both backends.
//!
//! - Script co-browsing: an agent asks through the live view, the visitor
//!   script hears it on its control stream and accepts, grants and ends; what
//!   the agent may do follows the visitor's answers; another tenant's agent
//!   and anonymous callers get nothing; the report counts it and it is audited.
//!   It ends when the agent's live view is gone for good and when the
//!   visitor's session ends.
//! - Universal co-browsing: the links' sockets drive a real Chromium (the one
//!   the tests install): frames arrive, control changes hands, a private
//!   address is refused, a file picker and a download are refused, the bound on
//!   sessions holds, a guest reaching another instance is relayed to the one
//!   running the browser, a session ends with its links, and the sessions'
//!   ends feed the universal co-browse report.

mod script;
mod universal;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use reqwest::StatusCode;
use serde_json::{json, Value};
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};
use tokio_tungstenite::{tungstenite::Message, MaybeTlsStream, WebSocketStream};

use crate::utils::{ok_json, TestApp};

const WAIT: Duration = Duration::from_secs(20);

/// Sums a metric over a report's buckets.
fn sum(report: &Value, name: &str) -> f64 {
    report["results"]
        .as_object()
        .unwrap()
        .values()
        .filter_map(|bucket| bucket[name].as_str())
        .map(|n| n.parse::<f64>().unwrap())
        .sum()
}

async fn report(app: &TestApp, token: &str, path: &str, metrics: &[&str]) -> Value {
    let metrics: Vec<Value> = metrics.iter().map(|m| json!({"metricName": m})).collect();
    let body = json!({"metrics": metrics, "dateFilter": {"grouping": "TODAY"}});
    ok_json(app.post(path, token, body).await, StatusCode::OK).await
}

async fn audit_actions(app: &TestApp, token: &str) -> String {
    ok_json(app.get("/rest/v1/audit?pageSize=100", token).await, StatusCode::OK)
        .await
        .to_string()
}

/// A site on loopback, which the tests' settings let Chromium reach: `/` is red,
/// `/form` is a file input over the whole viewport, `/report.pdf` a download.
pub(crate) async fn red_site() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 4096];
                let read = socket.read(&mut buf).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&buf[..read]);
                let (kind, body) = if request.starts_with("GET /form ") {
                    let input = "<input type=file style='position:fixed;left:0;top:0;width:1280px;height:720px'>";
                    ("text/html", format!("<!doctype html><title>Form</title>{input}"))
                } else if request.starts_with("GET /report.pdf ") {
                    (
                        "application/pdf\r\ncontent-disposition: attachment; filename=report.pdf",
                        "%PDF-1.4".into(),
                    )
                } else {
                    (
                        "text/html",
                        "<!doctype html><title>Red</title><body style='background:#f00'>".into(),
                    )
                };
                let reply = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {kind}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
            });
        }
    });
    format!("http://{addr}/")
}

pub(crate) type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

pub(crate) async fn connect(app: &TestApp, link: &str) -> Socket {
    let url = url::Url::parse(link).unwrap();
    // The link names the public URL; the socket is this instance's.
    let target = format!(
        "{}{}/ws?{}",
        app.base.replacen("http://", "ws://", 1),
        url.path(),
        url.query().unwrap()
    );
    tokio_tungstenite::connect_async(target).await.unwrap().0
}

/// The next text message whose type is `kind` (frames and others skipped).
pub(crate) async fn next_of(socket: &mut Socket, kind: &str) -> Value {
    first_of(socket, &[kind]).await
}

/// The next text message whose type is one of `kinds` (frames and others skipped).
pub(crate) async fn first_of(socket: &mut Socket, kinds: &[&str]) -> Value {
    tokio::time::timeout(WAIT, async {
        loop {
            match socket.next().await {
                Some(Ok(Message::Text(text))) => {
                    let value: Value = serde_json::from_str(text.as_str()).unwrap();
                    if kinds.iter().any(|kind| value["type"] == *kind) {
                        return value;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the socket ended before {kinds:?}: {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{kinds:?} within {WAIT:?}"))
}

pub(crate) async fn say(socket: &mut Socket, message: Value) {
    socket.send(Message::text(message.to_string())).await.unwrap();
}
