//! The guard proxy: every connection a co-browsing browser makes goes through
//! it, so the SSRF guard applies to pages, their images and scripts, redirects
//! and WebSockets alike, whatever the page does.
//!
//! It is a plain forward proxy on loopback, one per session. For each request
//! it resolves the host itself, keeps only the addresses the guard allows (the
//! webhooks' rule, [`crate::webhooks::guard`]) and connects to one of *those*,
//! so a name that resolves to a private address, or changes its answer between
//! a check and the connection, never reaches the private network. `CONNECT`
//! (HTTPS, `wss:`) is tunnelled; plain HTTP is forwarded in origin form with
//! `Connection: close`, so that a proxy connection never carries a second
//! request to another host. Refusals are reported to the session, which tells
//! its participants.

use std::{net::SocketAddr, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
    task::JoinHandle,
};

use crate::webhooks::guard::{resolve_allowed, AllowedNetworks};

/// Longest request head the proxy reads.
const MAX_HEAD: usize = 32 * 1024;
/// How long a client may take to send its request head, and an upstream to accept.
const WAIT: Duration = Duration::from_secs(15);

/// A host the guard refused, for the session to announce.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The host as the browser asked for it.
    pub host: String,
}

/// Starts a proxy on a free loopback port; it runs until the handle is aborted.
pub async fn start(
    allowed: AllowedNetworks,
    refusals: mpsc::UnboundedSender<Refusal>,
) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                continue;
            };
            let (allowed, refusals) = (allowed.clone(), refusals.clone());
            tokio::spawn(async move {
                if let Err(e) = serve(client, &allowed, &refusals).await {
                    tracing::debug!(error = %e, "co-browsing proxy connection failed");
                }
            });
        }
    });
    Ok((addr, task))
}

/// One client connection: one request, or one tunnel.
async fn serve(
    mut client: TcpStream,
    allowed: &AllowedNetworks,
    refusals: &mpsc::UnboundedSender<Refusal>,
) -> std::io::Result<()> {
    let (head, rest) = match tokio::time::timeout(WAIT, read_head(&mut client)).await {
        Ok(Ok(Some(read))) => read,
        _ => return Ok(()),
    };
    let Some(request) = Request::parse(&head) else {
        return client.write_all(&answer(400, "Bad Request", "")).await;
    };
    let targets = match resolve_allowed(&request.host, request.port, allowed).await {
        Ok(t) if !t.is_empty() => t,
        Ok(_) => {
            let _ = refusals.send(Refusal {
                host: request.host.clone(),
            });
            let page = format!(
                "<!doctype html><title>Refused</title><h1>Rapport refused to open {}</h1>\
                 <p>It is on a private or local network, which co-browsing does not reach.</p>",
                html_escape(&request.host)
            );
            return client.write_all(&answer(403, "Forbidden", &page)).await;
        }
        Err(e) => {
            return client.write_all(&answer(502, "Bad Gateway", &html_escape(&e))).await;
        }
    };
    let mut upstream = None;
    for target in targets {
        if let Ok(Ok(stream)) = tokio::time::timeout(WAIT, TcpStream::connect(target)).await {
            upstream = Some(stream);
            break;
        }
    }
    let Some(mut upstream) = upstream else {
        return client.write_all(&answer(502, "Bad Gateway", "")).await;
    };
    let _ = upstream.set_nodelay(true);
    let _ = client.set_nodelay(true);
    if request.connect {
        client.write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n").await?;
    } else {
        upstream.write_all(request.forwarded_head().as_bytes()).await?;
    }
    upstream.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// Reads up to the end of the request head; returns the head and what came after it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<Option<(String, Vec<u8>)>> {
    let mut buffer = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buffer.extend_from_slice(&chunk[..n]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return Ok(Some((String::from_utf8_lossy(&buffer).into_owned(), rest)));
        }
        if buffer.len() > MAX_HEAD {
            return Ok(None);
        }
    }
}

/// A parsed proxy request.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    connect: bool,
    method: String,
    host: String,
    port: u16,
    /// Path and query, for plain HTTP.
    path: String,
    /// Header lines, as sent.
    headers: Vec<String>,
}

impl Request {
    fn parse(head: &str) -> Option<Request> {
        let mut lines = head.split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, target) = (first.next()?, first.next()?);
        let headers: Vec<String> = lines.filter(|l| !l.is_empty()).map(str::to_string).collect();
        if method.eq_ignore_ascii_case("CONNECT") {
            let (host, port) = target.rsplit_once(':')?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            return Some(Request {
                connect: true,
                method: method.to_string(),
                host: host.to_string(),
                port: port.parse().ok()?,
                path: String::new(),
                headers,
            });
        }
        let url = url::Url::parse(target).ok()?;
        if !matches!(url.scheme(), "http" | "ws") {
            return None;
        }
        let host = match url.host()? {
            url::Host::Domain(d) => d.to_string(),
            url::Host::Ipv4(ip) => ip.to_string(),
            url::Host::Ipv6(ip) => ip.to_string(),
        };
        let mut path = url.path().to_string();
        if let Some(query) = url.query() {
            path.push('?');
            path.push_str(query);
        }
        Some(Request {
            connect: false,
            method: method.to_string(),
            host,
            port: url.port_or_known_default().unwrap_or(80),
            path,
            headers,
        })
    }

    /// The head sent upstream: origin form, no proxy headers, and the
    /// connection closed after the answer (unless it is upgraded to a WebSocket).
    fn forwarded_head(&self) -> String {
        let upgrade = self
            .headers
            .iter()
            .any(|h| h.to_ascii_lowercase().starts_with("upgrade:"));
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        for line in &self.headers {
            let name = line.split(':').next().unwrap_or_default().trim().to_ascii_lowercase();
            if name.starts_with("proxy-") || (name == "connection" && !upgrade) || name == "keep-alive" {
                continue;
            }
            head.push_str(line);
            head.push_str("\r\n");
        }
        if !upgrade {
            head.push_str("Connection: close\r\n");
        }
        head.push_str("\r\n");
        head
    }
}

fn answer(status: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn html_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tunnels_and_forwards_in_origin_form() {
        let tunnel = Request::parse("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n").unwrap();
        assert!(tunnel.connect);
        assert_eq!((tunnel.host.as_str(), tunnel.port), ("example.com", 443));
        let v6 = Request::parse("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 8443));

        let plain = Request::parse(
            "GET http://127.0.0.1:8080/a/b?c=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            (plain.host.as_str(), plain.port, plain.path.as_str()),
            ("127.0.0.1", 8080, "/a/b?c=1")
        );
        assert_eq!(
            plain.forwarded_head(),
            "GET /a/b?c=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let socket =
            Request::parse("GET http://h/ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
                .unwrap();
        assert!(socket.forwarded_head().contains("Connection: Upgrade\r\n"));
        assert!(Request::parse("GET ftp://h/ HTTP/1.1\r\n\r\n").is_none());
    }

    #[tokio::test]
    async fn refuses_private_addresses_and_reports_them() {
        let (tx, mut refused) = mpsc::unbounded_channel();
        let (addr, task) = start(AllowedNetworks::None, tx).await.unwrap();
        let mut client = TcpStream::connect(addr).await.unwrap();
        client
            .write_all(b"GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\nHost: 169.254.169.254\r\n\r\n")
            .await
            .unwrap();
        let mut reply = String::new();
        client.read_to_string(&mut reply).await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 403"), "{reply}");
        assert_eq!(refused.recv().await.unwrap().host, "169.254.169.254");
        task.abort();
    }

    #[tokio::test]
    async fn forwards_to_allowed_networks() {
        let site = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let site_addr = site.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = site.accept().await.unwrap();
            let mut buf = vec![0u8; 1024];
            let n = s.read(&mut buf).await.unwrap();
            let head = String::from_utf8_lossy(&buf[..n]).to_string();
            assert!(head.starts_with("GET /page HTTP/1.1\r\n"), "{head}");
            s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
                .await
                .unwrap();
        });
        let (tx, _refused) = mpsc::unbounded_channel();
        let allowed: AllowedNetworks = "127.0.0.0/8".parse().unwrap();
        let (addr, task) = start(allowed, tx).await.unwrap();
        let mut client = TcpStream::connect(addr).await.unwrap();
        client
            .write_all(format!("GET http://{site_addr}/page HTTP/1.1\r\nHost: {site_addr}\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut reply = String::new();
        client.read_to_string(&mut reply).await.unwrap();
        assert!(reply.starts_with("HTTP/1.1 200") && reply.ends_with("ok"), "{reply}");
        task.abort();
    }
}
