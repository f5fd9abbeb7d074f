//! How the bench reaches the server: the workspaces with their visitors' streams
//! and sockets, and idle keep-alive connections, the floor under a stream's cost.

use futures_util::{stream, StreamExt};
use serde_json::{json, Value};

use super::provision;

/// A workspace as the bench uses it.
#[derive(Clone)]
pub(crate) struct Workspace {
    pub(crate) base: String,
    pub(crate) api_key: String,
    pub(crate) widget_key: String,
}

impl Workspace {
    pub(crate) async fn new(base: &str, url: &str, slug: &str) -> Workspace {
        let api_key = provision(url, &["admin", "create-api-key", "--tenant", slug, "--name", "bench"]);
        let answer: Value = reqwest::Client::new()
            .get(format!("{base}/rest/v1/widget/key"))
            .bearer_auth(&api_key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        Workspace {
            base: base.to_string(),
            api_key,
            widget_key: answer["widgetKey"].as_str().unwrap().to_string(),
        }
    }

    /// Starts a visitor: `(customer id, visitor token)`, or the refusal's status.
    pub(crate) async fn visitor(&self, client: &reqwest::Client) -> Result<(String, String), u16> {
        let response = client
            .post(format!("{}/rest/v1/widget/visitor", self.base))
            .header("rapport-widget-key", &self.widget_key)
            .json(&json!({"firstName": "Bench"}))
            .send()
            .await
            .map_err(|_| 0u16)?;
        if response.status() != reqwest::StatusCode::CREATED {
            return Err(response.status().as_u16());
        }
        let identity: Value = response.json().await.map_err(|_| 0u16)?;
        Ok((
            identity["customerId"].as_str().unwrap_or_default().to_string(),
            identity["visitorToken"].as_str().unwrap_or_default().to_string(),
        ))
    }

    /// Opens a visitor's widget stream.
    pub(crate) async fn stream(&self, client: &reqwest::Client, token: &str) -> reqwest::Response {
        client
            .get(format!("{}/rest/v1/widget/stream", self.base))
            .header("rapport-widget-key", &self.widget_key)
            .bearer_auth(token)
            .send()
            .await
            .unwrap()
    }
}

/// A visitor's open widget socket (`/widget/socket`), as the visitor script
/// holds it: connected, hello sent, `ready` received.
pub(crate) type Socket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

impl Workspace {
    /// Opens a visitor's widget socket; `None` if it was refused.
    pub(crate) async fn socket(&self, token: &str) -> Option<Socket> {
        use futures_util::SinkExt;
        use tokio_tungstenite::tungstenite::Message;
        let url = format!("{}/rest/v1/widget/socket", self.base.replacen("http", "ws", 1));
        let (mut socket, _) = tokio_tungstenite::connect_async(url).await.ok()?;
        let hello = json!({"widgetKey": self.widget_key, "visitorToken": token}).to_string();
        socket.send(Message::text(hello)).await.ok()?;
        match socket.next().await {
            Some(Ok(Message::Text(text))) if text.contains("\"ready\"") => Some(socket),
            _ => None,
        }
    }
}

/// Opens `n` connections that each made one request (`GET /health`) and then
/// stay open and idle, as a browser's keep-alive connection does: what the HTTP
/// server holds per connection, whatever it serves. It is the floor under what
/// an open stream costs.
pub(crate) async fn idle_connections(base: &str, n: usize) -> Vec<tokio::net::TcpStream> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://").to_string();
    stream::iter(0..n)
        .map(|_| {
            let addr = addr.clone();
            async move {
                let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
                let request = format!("GET /health HTTP/1.1\r\nHost: {addr}\r\n\r\n");
                socket.write_all(request.as_bytes()).await.unwrap();
                // Read the whole answer: its head, then `Content-Length` bytes.
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let read = socket.read(&mut buf).await.unwrap();
                    assert!(read > 0, "the server closed an idle connection");
                    got.extend_from_slice(&buf[..read]);
                    let text = String::from_utf8_lossy(&got);
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length: usize = text[..end]
                            .lines()
                            .find_map(|l| {
                                let (name, value) = l.split_once(':')?;
                                name.eq_ignore_ascii_case("content-length")
                                    .then(|| value.trim().parse().ok())?
                            })
                            .unwrap_or(0);
                        if got.len() >= end + 4 + length {
                            break;
                        }
                    }
                }
                socket
            }
        })
        .buffer_unordered(64)
        .collect()
        .await
}
