//! `/chat/{token}`: the continue link of a reply mailed to a visitor who had
//! left (see `rapport_core::conversations::replies_by_mail`). The link is a
//! capability for that one conversation. `GET` only shows a button, since
//! mail scanners fetch every link they see; the button's `POST` gives this
//! browser a new visitor token of the conversation's customer and serves a
//! page of Rapport's own with the chat open on it. The token is handed to the
//! visitor script in the page (never in a URL), and the page is not cached.

use axum::{
    extract::{Path, State},
    http::{header, StatusCode},
    response::{IntoResponse, Response},
};
use rapport_core::{conversations::ContinueLink, CoreError};

use crate::state::AppState;

/// Escapes text for HTML (names come from the workspace's settings).
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A page of this flow: no caching, no referrer beyond Rapport, scripts and
/// connections of Rapport only.
fn page(link: &ContinueLink, body: &str) -> Response {
    let html = format!(
        "<!DOCTYPE html><html lang=\"{}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{} · Rapport</title><link rel=\"stylesheet\" href=\"/pkg/rapport.css\"></head>\
         <body><main id=\"main\" class=\"login\">{body}</main></body></html>",
        rapport_app::language::html_lang(&link.language),
        escape(&link.workspace),
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (header::REFERRER_POLICY, "same-origin"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; script-src 'self'; connect-src 'self' ws: wss:; style-src 'self'; \
                 img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
            ),
        ],
        html,
    )
        .into_response()
}

/// What an unknown or expired link shows.
fn gone() -> Response {
    (
        StatusCode::NOT_FOUND,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Link expired · Rapport</title>\
         <link rel=\"stylesheet\" href=\"/pkg/rapport.css\"></head><body><main id=\"main\" class=\"login\">\
         <div class=\"card login-card\"><h1>This link has expired</h1>\
         <p>Continue links work for 7 days. Write to us again from our website.</p></div></main></body></html>",
    )
        .into_response()
}

/// `GET /chat/{token}`: the button that continues the conversation.
pub async fn continue_page(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    match state.services.continue_link(&token).await {
        Ok(link) => {
            let workspace = escape(&link.workspace);
            page(
                &link,
                &format!(
                    "<form class=\"card login-card\" method=\"post\">\
                     <h1>Your conversation with {workspace}</h1>\
                     <p>Pick up where you left off: the chat opens on this page.</p>\
                     <button type=\"submit\" class=\"button primary\">Continue the conversation</button></form>"
                ),
            )
        }
        Err(CoreError::NotFound(_)) => gone(),
        Err(err) => {
            tracing::error!(error = %err, "reading a continue link failed");
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}

/// `POST /chat/{token}`: the chat, open, as the link's customer.
pub async fn continue_chat(State(state): State<AppState>, Path(token): Path<String>) -> Response {
    match state.services.continue_conversation(&token).await {
        Ok((link, identity)) => {
            let workspace = escape(&link.workspace);
            // Ids and tokens are URL-safe: nothing in them needs escaping, and
            // escaping keeps it so.
            let script = format!(
                "<script async src=\"/visitor/loader.js\" data-rapport-key=\"{}\" \
                 data-rapport-continue=\"{}:{}\"></script>",
                escape(&link.widget_key),
                escape(&identity.customer_id),
                escape(&identity.visitor_token),
            );
            page(
                &link,
                &format!(
                    "<div class=\"card login-card\"><h1>Your conversation with {workspace}</h1>\
                     <p>The chat is open in the corner of this page.</p></div>{script}"
                ),
            )
        }
        Err(CoreError::NotFound(_)) => gone(),
        Err(err) => {
            tracing::error!(error = %err, "following a continue link failed");
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}
