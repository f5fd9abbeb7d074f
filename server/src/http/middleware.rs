//! Cross-cutting request handling: error shape under `/rest/`, body bounds,
//! each workspace's share of the instance for public requests, REST rate
//! limits, cross-site request protection for the dashboard, and the access-log
//! span.

use std::sync::Arc;

use axum::{
    body::Body,
    extract::{Request, State},
    http::{header, HeaderMap, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use rapport_core::crypto::token_digest;
use tower_http::trace::MakeSpan;

use super::{
    error::{ApiError, PROBLEM_JSON},
    extract::{bearer_token, client_ip},
    fair_share::PublicShares,
    request_id::RequestId,
};
use crate::{rest::WIDGET_KEY_HEADER, state::AppState};

/// Under `/rest/`: any error answer that is not yet problem+json (axum's 404/405,
/// tower's 408/413, a panic's 500) is rewritten into one, so clients meet one error
/// shape everywhere.
pub async fn problem_fallback(req: Request, next: Next) -> Response {
    let is_rest = req.uri().path().starts_with("/rest/");
    let response = next.run(req).await;
    if !is_rest {
        return response;
    }
    let status = response.status();
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with(PROBLEM_JSON));
    if (status.is_client_error() || status.is_server_error()) && !is_problem {
        return ApiError::for_status(status).into_response();
    }
    response
}

/// Runs the rest of the request on a task of its own, so that a client that
/// goes away (a page closed during its keepalive upload, a request past the
/// timeout) cannot cancel a handler half-way through a database transaction.
/// A transaction dropped mid-statement can leave SQLite's single writer
/// connection inside it, and every later write would fail. The client still
/// gets its answer (or the timeout) as before; the work finishes regardless.
pub async fn finish_even_if_abandoned(req: Request, next: Next) -> Response {
    // The request's id and log span go along to the new task.
    let id = super::request_id::current_request_id();
    let work = super::request_id::within(id, next.run(req));
    match tokio::spawn(tracing::Instrument::in_current_span(work)).await {
        Ok(response) => response,
        Err(e) => {
            tracing::error!(error = %e, "a request's task failed");
            ApiError::internal("handler failed").into_response()
        }
    }
}

/// The dashboard's bundle (`/pkg/…`) and the visitor script (`/visitor/…`) are
/// revalidated on every use: their file names carry no content hash, and a
/// page's wasm chunks (or the script's loader and chat UI) only work with files
/// of the same build, so a browser must never mix a cached old file with a new
/// one. Unchanged files cost a 304.
pub async fn revalidate_bundle(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let is_bundle = path.starts_with("/pkg/") || path.starts_with("/visitor/");
    let mut response = next.run(req).await;
    if is_bundle && !response.headers().contains_key(header::CACHE_CONTROL) {
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-cache"));
    }
    response
}

/// On an https public URL, every answer tells browsers to come back over
/// https only (HSTS, a year), so no later visit starts in plain text.
pub async fn strict_transport(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let mut response = next.run(req).await;
    if state.config.secure_cookies() {
        response.headers_mut().insert(
            header::STRICT_TRANSPORT_SECURITY,
            header::HeaderValue::from_static("max-age=31536000"),
        );
    }
    response
}

/// The paths that take a file in their body: a visitor's from the widget, and
/// an agent's from the inbox (`/inbox/{customerId}/file`).
pub fn takes_file(path: &str) -> bool {
    path == "/rest/v1/widget/file"
        || path
            .strip_prefix("/inbox/")
            .and_then(|rest| rest.strip_suffix("/file"))
            .is_some_and(|id| !id.is_empty() && !id.contains('/'))
}

/// What a multipart form may add around its file (boundaries, headers, the
/// other fields).
const FORM_OVERHEAD_BYTES: usize = 64 * 1024;

/// Bounds every request body: files (see [`takes_file`]) by the file limit,
/// everything else by the body limit. A declared length over it is refused
/// before the body is read; a longer body without one fails when read (413).
pub async fn limit_body(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let file = takes_file(path);
    // The inbox's form wraps the file in multipart with a field or two, and
    // answers a refused file itself, with a way back to the conversation.
    let form = file && path.starts_with("/inbox/");
    let limit = match (file, form) {
        (true, true) => state.config.max_file_bytes + FORM_OVERHEAD_BYTES,
        (true, false) => state.config.max_file_bytes,
        _ => state.config.max_body_bytes,
    };
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if !form && declared.is_some_and(|n| n > limit as u64) {
        return if file {
            let mut refused = ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "file_too_large",
                format!("files may have at most {limit} bytes"),
            )
            .into_response();
            readable_by_any_page(&mut refused);
            refused
        } else {
            ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE).into_response()
        };
    }
    let (parts, body) = req.into_parts();
    let body = Body::new(http_body_util::Limited::new(body, limit));
    next.run(Request::from_parts(parts, body)).await
}

/// Lets any page's script read a refusal answered before the widget's CORS
/// layer (and its `Retry-After`): without this the visitor's browser would hide
/// the reason behind a network error.
pub fn readable_by_any_page(response: &mut Response) {
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        header::HeaderValue::from_static("*"),
    );
    headers.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        header::HeaderValue::from_static("retry-after"),
    );
}

/// Whether reading a body failed because it ran past [`limit_body`]'s limit.
pub fn is_length_limit(error: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if e.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Middleware: runs a request that names a widget key in its workspace's
/// share, its body read first (but a file's). Its state is the instance's
/// [`PublicShares`] alone (see [`super::fair_share`]).
pub async fn public_share(State(shares): State<Arc<PublicShares>>, req: Request, next: Next) -> Response {
    let Some(key) = req
        .headers()
        .get(WIDGET_KEY_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        return next.run(req).await;
    };
    let (req, body_bytes) = if takes_file(req.uri().path()) {
        (req, 0)
    } else {
        let (parts, body) = req.into_parts();
        // `limit_body` has bounded the body already.
        let bytes = match axum::body::to_bytes(body, usize::MAX).await {
            Ok(bytes) => bytes,
            Err(e) if is_length_limit(&e) => {
                return ApiError::for_status(StatusCode::PAYLOAD_TOO_LARGE).into_response();
            }
            Err(_) => {
                return ApiError::bad_request("unreadable_body", "the request body could not be read").into_response();
            }
        };
        let len = bytes.len();
        (Request::from_parts(parts, Body::from(bytes)), len)
    };
    match shares.enter(&key, body_bytes).await {
        // Held until the handler has answered (a stream's body goes on without it).
        Ok(_turn) => next.run(req).await,
        Err(refused) => {
            tracing::debug!(?refused, "a workspace's public requests are over its share");
            let mut refused = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "workspace_busy",
                "this workspace's pages send more requests than the server runs for it at once; retry shortly",
            )
            .retry_after(1)
            .into_response();
            readable_by_any_page(&mut refused);
            refused
        }
    }
}

/// REST rate limits, per client IP and per token (its digest). Runs before
/// authentication, so guessing tokens is limited too.
pub async fn rest_rate_limit(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    let ip = client_ip(&parts);
    let digest = bearer_token(&parts).ok().flatten().map(|t| token_digest(&t));
    if let Err(wait) = state.limiters.check_rest(ip, digest.as_deref()).await {
        return ApiError::rate_limited(wait).into_response();
    }
    next.run(Request::from_parts(parts, body)).await
}

/// Refuses state-changing dashboard requests (server functions, login, logout,
/// uploads) that no page of Rapport's own origin sent ([`is_same_origin`]).
/// Together with `SameSite=Lax` session cookies this closes cross-site request
/// forgery, login forgery included, without tokens in every form.
pub async fn same_origin_only(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if safe || req.uri().path().starts_with("/rest/") || is_same_origin(req.headers(), &state.config) {
        return next.run(req).await;
    }
    tracing::warn!(path = req.uri().path(), "cross-site request refused");
    (StatusCode::FORBIDDEN, "cross-site request refused").into_response()
}

/// Whether a browser request comes from a page of Rapport's origin: the
/// public URL's (`RAPPORT_PUBLIC_URL`). Without a public URL set, the origin
/// the request was addressed to (its `Host`) counts too, so a development
/// server answers on any name it is reached by.
///
/// Browsers send `Origin` with every state-changing request (and every
/// WebSocket). Without it, the Fetch Metadata header must say `same-origin`
/// (or `none`: the user's own navigation). A request with neither is refused:
/// no browser acting for a user sends such a request, and the REST API, where
/// scripts and servers call, is not behind this check.
pub fn is_same_origin(headers: &HeaderMap, config: &crate::config::ServeConfig) -> bool {
    let fetch_site_says_so = || {
        headers
            .get("sec-fetch-site")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|site| site == "same-origin" || site == "none")
    };
    let Some(origin) = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()) else {
        return fetch_site_says_so();
    };
    let Some(origin) = origin_of(origin) else {
        // `null`: a sandboxed frame, a redirect across sites, or a page of
        // this site whose referrer policy hides its origin. Fetch Metadata,
        // which browsers set whatever the policy, tells them apart.
        return origin == "null" && fetch_site_says_so();
    };
    if origin_of(&config.public_url()).is_some_and(|public| public == origin) {
        return true;
    }
    config.public_url.is_none()
        && headers
            .get(header::HOST)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|host| {
                origin
                    .split_once("://")
                    .is_some_and(|(_, h)| h.eq_ignore_ascii_case(host))
            })
}

/// `scheme://host[:port]` of a URL, as browsers write it in `Origin` (default
/// ports left out, the host in lower case).
fn origin_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let origin = parsed.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// Names the access-log span: method, path (never the query string, which may hold
/// an `access_token`) and request id.
#[derive(Clone, Copy, Debug, Default)]
pub struct RequestSpan;

impl MakeSpan<Body> for RequestSpan {
    fn make_span(&mut self, req: &Request<Body>) -> tracing::Span {
        let id = req.extensions().get::<RequestId>().map(|r| r.0.as_str()).unwrap_or("-");
        tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_upload_paths_take_files() {
        assert!(takes_file("/rest/v1/widget/file"));
        assert!(takes_file("/inbox/0190c3d2-8c1e/file"));
        assert!(!takes_file("/inbox//file"));
        assert!(!takes_file("/inbox/a/b/file"));
        assert!(!takes_file("/rest/v1/widget/message"));
        assert!(!takes_file("/inbox/events"));
    }
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn origin_rules() {
        let mut config = crate::config::ServeConfig::for_tests("sqlite::memory:");
        config.public_url = Some("https://chat.shop.example/".into());
        let public = |pairs: &[(&'static str, &'static str)]| is_same_origin(&headers(pairs), &config);
        assert!(public(&[
            ("host", "10.0.0.5:3000"),
            ("origin", "https://chat.shop.example")
        ]));
        assert!(
            public(&[("origin", "https://Chat.Shop.Example:443")]),
            "as a URL, not as text"
        );
        assert!(
            !public(&[("origin", "http://chat.shop.example")]),
            "another scheme is another origin"
        );
        assert!(
            !public(&[("host", "evil.example"), ("origin", "https://evil.example")]),
            "a name that points here is not this site (DNS rebinding)"
        );
        assert!(!public(&[("origin", "null")]));
        assert!(!public(&[("origin", "null"), ("sec-fetch-site", "cross-site")]));
        assert!(public(&[("origin", "null"), ("sec-fetch-site", "same-origin")]));
        assert!(public(&[("sec-fetch-site", "same-origin")]));
        assert!(!public(&[("sec-fetch-site", "cross-site")]));
        assert!(
            !public(&[("sec-fetch-site", "same-site")]),
            "a sibling subdomain is not this site"
        );
        assert!(
            !public(&[("host", "chat.shop.example")]),
            "neither header: no browser's request"
        );

        config.public_url = None;
        let development = |pairs: &[(&'static str, &'static str)]| is_same_origin(&headers(pairs), &config);
        assert!(development(&[
            ("host", "localhost:3000"),
            ("origin", "http://localhost:3000")
        ]));
        assert!(!development(&[("host", "a.test:3000"), ("origin", "http://evil.test")]));
    }
}
