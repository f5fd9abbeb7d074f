//! Request ids: taken from `x-request-id` when the client sends a sane one,
//! otherwise generated; echoed in the response header, attached to the request's
//! tracing span, and readable anywhere in the request's task (error bodies quote it).

use axum::{extract::Request, http::HeaderValue, middleware::Next, response::Response};

/// The header carrying the request id.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

tokio::task_local! {
    static REQUEST_ID: String;
}

/// The id of the request being handled by this task, if any.
pub fn current_request_id() -> Option<String> {
    REQUEST_ID.try_with(Clone::clone).ok()
}

/// The request id as a request extension, for the tracing span.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// Runs `work` with `id` as the current request id (on another task, the
/// request's id does not follow by itself).
pub async fn within<F: std::future::Future>(id: Option<String>, work: F) -> F::Output {
    match id {
        Some(id) => REQUEST_ID.scope(id, work).await,
        None => work.await,
    }
}

/// Middleware: assigns the id, runs the request inside its scope, sets the header.
pub async fn assign(mut req: Request, next: Next) -> Response {
    let id = req
        .headers()
        .get(REQUEST_ID_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty() && v.len() <= 64 && v.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
        .map(str::to_string)
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    req.extensions_mut().insert(RequestId(id.clone()));
    // Also on the request itself, so code that only sees headers (server functions) can read it.
    if let Ok(value) = HeaderValue::from_str(&id) {
        req.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    let mut response = REQUEST_ID.scope(id.clone(), next.run(req)).await;
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, value);
    }
    response
}
