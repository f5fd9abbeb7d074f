//! The demo shop: a few static pages with the visitor script embedded, served on
//! an address of their own (`RAPPORT_DEMO_ADDR`), so that they are another
//! origin than Rapport, as a customer's website is. `cargo xtask run` turns it on,
//! so that a newcomer can chat as a visitor, see the conversation in the inbox and
//! watch the visit live within a minute of starting.
//!
//! The pages come from `<site dir>/demo/` (the build copies
//! `frontend/visitor/demo/` there). In HTML, `{{RAPPORT_ORIGIN}}` becomes
//! Rapport's public URL, `{{RAPPORT_SOCKET_ORIGIN}}` the same as a `ws:`/`wss:`
//! origin (for a page's CSP: the widget's live messages come over a socket), and `{{WIDGET_KEY}}` the widget key of the demo's
//! workspace, read on each request so that a rotated key shows at once.

use std::{net::SocketAddr, path::PathBuf};

use anyhow::Context;
use axum::{
    extract::{Path, State},
    http::{header, StatusCode},
    response::{IntoResponse, Response},
    routing::get,
    Router,
};
use rapport_core::Services;
use tokio::net::TcpListener;

/// What the demo server needs.
#[derive(Clone)]
struct Demo {
    services: Services,
    pages: PathBuf,
    rapport_origin: String,
    workspace: String,
}

/// Serves the demo shop on `addr` until `shutdown` completes. `workspace` is the
/// id or handle of the workspace whose widget key the pages embed.
pub async fn serve(
    addr: SocketAddr,
    services: Services,
    site_dir: PathBuf,
    rapport_origin: String,
    workspace: String,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<SocketAddr> {
    let listener = TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for the demo shop"))?;
    let local = listener.local_addr()?;
    let demo = Demo {
        services,
        pages: site_dir.join("demo"),
        rapport_origin: rapport_origin.trim_end_matches('/').to_string(),
        workspace,
    };
    let router = Router::new()
        .route("/", get(|state| page(state, Path("index.html".to_string()))))
        .route("/{*path}", get(page))
        .with_state(demo);
    tokio::spawn(async move {
        if let Err(err) = axum::serve(listener, router).with_graceful_shutdown(shutdown).await {
            tracing::error!(error = %err, "the demo shop stopped");
        }
    });
    Ok(local)
}

/// Whether `path` is a plain relative file path: no `..`, no hidden files, no
/// absolute parts, so that nothing outside the demo directory is served.
fn is_safe(path: &str) -> bool {
    !path.is_empty()
        && path.split('/').all(|part| {
            !part.is_empty()
                && !part.starts_with('.')
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        })
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}

async fn page(State(demo): State<Demo>, Path(path): Path<String>) -> Response {
    if !is_safe(&path) {
        return StatusCode::NOT_FOUND.into_response();
    }
    let Ok(bytes) = tokio::fs::read(demo.pages.join(&path)).await else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let kind = content_type(&path);
    if !kind.starts_with("text/html") {
        return ([(header::CONTENT_TYPE, kind)], bytes).into_response();
    }
    let key = match demo.services.find_tenant(&demo.workspace).await {
        Ok(tenant) => demo.services.widget_key(&tenant.id).await.unwrap_or_default(),
        Err(err) => {
            tracing::warn!(error = %err, workspace = %demo.workspace, "the demo shop's workspace is missing");
            String::new()
        }
    };
    let html = String::from_utf8_lossy(&bytes)
        .replace("{{RAPPORT_ORIGIN}}", &demo.rapport_origin)
        .replace(
            "{{RAPPORT_SOCKET_ORIGIN}}",
            &demo.rapport_origin.replacen("http", "ws", 1),
        )
        .replace("{{WIDGET_KEY}}", &key);
    (
        [
            (header::CONTENT_TYPE, kind),
            // The pages embed the current key; never keep an old one.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        html,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::is_safe;

    #[test]
    fn serves_only_plain_paths_inside_the_demo_directory() {
        for ok in ["index.html", "products.html", "img/shoe-1.svg", "a_b-c.css"] {
            assert!(is_safe(ok), "{ok}");
        }
        for bad in [
            "",
            "../secret",
            "a/../../b",
            "/etc/passwd",
            ".env",
            "a//b",
            "a/.git/config",
            "a%2e%2e",
        ] {
            assert!(!is_safe(bad), "{bad}");
        }
    }
}
