//! REST errors as RFC 9457 `application/problem+json`, with a stable `code`.
//!
//! Handlers return [`ApiError`]; [`CoreError`]s convert into it. Every error answer
//! under `/rest/` has the same shape, including those axum or tower produce (unknown
//! path, wrong method, timeouts, oversized bodies), which
//! [`problem_fallback`](crate::http::middleware::problem_fallback) rewrites.
//! Internal errors are logged with their cause; the client sees a generic sentence
//! and the request id to quote.

use axum::{
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
};
use rapport_core::{CoreError, FieldError};
use serde::Serialize;

use super::request_id::current_request_id;

/// Media type of every error body.
pub const PROBLEM_JSON: &str = "application/problem+json";

/// The body of an error answer (RFC 9457 plus `code`, `requestId` and `errors`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Problem {
    /// URI naming the problem kind: `urn:rapport:problem:<code>`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Short summary of the problem kind.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What happened in this case.
    pub detail: String,
    /// Stable machine-readable code, e.g. `validation_failed`, `not_found`.
    pub code: String,
    /// The request id (also in the `x-request-id` header), for support.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// For validation errors: each offending field.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
}

/// An error answer of the REST API.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: String,
    detail: String,
    errors: Vec<FieldError>,
    retry_after: Option<u64>,
    bearer_challenge: Option<&'static str>,
}

/// Result alias for REST handlers.
pub type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// An error with a status, a stable code and a detail sentence.
    pub fn new(status: StatusCode, code: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            status,
            code: code.into(),
            detail: detail.into(),
            errors: Vec::new(),
            retry_after: None,
            bearer_challenge: None,
        }
    }

    /// 400: the request cannot be read.
    pub fn bad_request(code: &str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, detail)
    }

    /// 401 with a `WWW-Authenticate: Bearer` challenge.
    pub fn unauthorized(code: &str, detail: impl Into<String>) -> Self {
        let mut e = Self::new(StatusCode::UNAUTHORIZED, code, detail);
        e.bearer_challenge = Some(if code == "invalid_token" { "invalid_token" } else { "" });
        e
    }

    /// 403.
    pub fn forbidden(code: &str, detail: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, code, detail)
    }

    /// 422 naming each field.
    pub fn validation(errors: Vec<FieldError>) -> Self {
        let detail = match errors.as_slice() {
            [one] => one.message.clone(),
            _ => format!("{} fields are invalid", errors.len()),
        };
        let mut e = Self::new(StatusCode::UNPROCESSABLE_ENTITY, "validation_failed", detail);
        e.errors = errors;
        e
    }

    /// This error, answered with `Retry-After: secs` (at least 1).
    pub fn retry_after(mut self, secs: u64) -> Self {
        self.retry_after = Some(secs.max(1));
        self
    }

    /// 429 with `Retry-After`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        let mut e = Self::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("too many requests; retry after {retry_after_secs} s"),
        );
        e.retry_after = Some(retry_after_secs.max(1));
        e
    }

    /// 500, after logging the cause. The client sees nothing of it.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_error",
            "an internal error occurred; quote the request id when reporting it",
        )
    }

    /// The status of this error.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// A problem body for a bare status, used to rewrite errors produced outside
    /// handlers.
    pub fn for_status(status: StatusCode) -> Self {
        let (code, detail) = match status {
            StatusCode::NOT_FOUND => ("route_not_found", "no such route"),
            StatusCode::METHOD_NOT_ALLOWED => ("method_not_allowed", "this route does not accept this method"),
            StatusCode::REQUEST_TIMEOUT => ("request_timeout", "the request took too long and was cancelled"),
            StatusCode::PAYLOAD_TOO_LARGE => ("payload_too_large", "the request body is larger than allowed"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ("unsupported_media_type", "send the body as application/json"),
            StatusCode::UNAUTHORIZED => return Self::unauthorized("missing_token", "authentication required"),
            StatusCode::FORBIDDEN => ("forbidden", "not allowed"),
            StatusCode::TOO_MANY_REQUESTS => return Self::rate_limited(1),
            s if s.is_server_error() => ("internal_error", "an internal error occurred"),
            _ => ("bad_request", "the request could not be processed"),
        };
        Self::new(status, code, detail)
    }
}

impl From<CoreError> for ApiError {
    fn from(err: CoreError) -> Self {
        match err {
            CoreError::NotFound(what) => Self::new(StatusCode::NOT_FOUND, "not_found", format!("{what} not found")),
            CoreError::Validation(errors) => Self::validation(errors),
            CoreError::Conflict { field, code, message } => {
                let mut e = Self::new(StatusCode::CONFLICT, code, message.clone());
                if let Some(field) = field {
                    e.errors = vec![FieldError::new(field, code, message)];
                }
                e
            }
            CoreError::Unauthenticated => Self::unauthorized("invalid_token", "the token is invalid or revoked"),
            CoreError::Forbidden => Self::forbidden("forbidden", "not allowed"),
            CoreError::Denied { code, message } => Self::forbidden(code, message),
            CoreError::RateLimited { retry_after_secs } => Self::rate_limited(retry_after_secs),
            CoreError::TooLarge { code, message } => Self::new(StatusCode::PAYLOAD_TOO_LARGE, code, message),
            CoreError::AllowanceSpent {
                code,
                message,
                retry_after_secs,
            } => {
                let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, code, message);
                e.retry_after = Some(retry_after_secs.max(1));
                e
            }
            CoreError::Internal(cause) => Self::internal(cause),
        }
    }
}

impl ApiError {
    /// The seconds a client should wait before it tries again (429s).
    pub fn wait_secs(&self) -> Option<u64> {
        self.retry_after
    }

    /// The problem document this error answers with, for channels other than
    /// an HTTP answer (a WebSocket's error frame).
    pub fn into_problem(self) -> Problem {
        let title = self.status.canonical_reason().unwrap_or("Error").to_string();
        Problem {
            kind: format!("urn:rapport:problem:{}", self.code),
            title,
            status: self.status.as_u16(),
            detail: self.detail,
            code: self.code,
            request_id: current_request_id(),
            errors: self.errors,
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, retry_after, bearer_challenge) = (self.status, self.retry_after, self.bearer_challenge);
        let body = serde_json::to_vec(&self.into_problem()).unwrap_or_default();
        let mut response = (status, body).into_response();
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
        if let Some(secs) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            // The body was refused before it was read whole, so this connection
            // is closed after the answer. Saying so keeps the client from sending
            // its next request on it: without the header that request raced the
            // close and failed (seen in the file tests, under load).
            headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        if let Some(error) = bearer_challenge {
            let value = if error.is_empty() {
                "Bearer realm=\"rapport\"".to_string()
            } else {
                format!("Bearer realm=\"rapport\", error=\"{error}\"")
            };
            if let Ok(v) = HeaderValue::from_str(&value) {
                headers.insert(header::WWW_AUTHENTICATE, v);
            }
        }
        response
    }
}

/// Documented error answers of every authenticated operation.
#[allow(dead_code)] // Only read by the OpenAPI derive.
#[derive(utoipa::IntoResponses)]
pub enum AuthErrors {
    /// The `Authorization` header and the `access_token` query parameter name
    /// different tokens (`conflicting_tokens`).
    #[response(status = 400, content_type = "application/problem+json")]
    ConflictingTokens(Problem),
    /// No token, or an invalid or revoked one.
    #[response(status = 401, content_type = "application/problem+json")]
    Unauthorized(Problem),
    /// The token may not do this (e.g. a platform key on tenant data).
    #[response(status = 403, content_type = "application/problem+json")]
    Forbidden(Problem),
    /// Rate limited; see `Retry-After`.
    #[response(status = 429, content_type = "application/problem+json")]
    RateLimited(Problem),
}

/// Documented error answers of operations that read a body or query.
#[allow(dead_code)] // Only read by the OpenAPI derive.
#[derive(utoipa::IntoResponses)]
pub enum InputErrors {
    /// The request cannot be read: the body is not valid JSON (`malformed_json`,
    /// `unreadable_body`), or the `Authorization` header and the `access_token` query
    /// parameter name different tokens (`conflicting_tokens`).
    // Operations list `AuthErrors` before these, so this description is the one a
    // 400 keeps; it names the token case too.
    #[response(status = 400, content_type = "application/problem+json")]
    Malformed(Problem),
    /// The body is larger than allowed.
    #[response(status = 413, content_type = "application/problem+json")]
    TooLarge(Problem),
    /// The body is not `application/json`.
    #[response(status = 415, content_type = "application/problem+json")]
    WrongMediaType(Problem),
    /// A field is missing, of the wrong type, or breaks a rule; `errors` names each.
    #[response(status = 422, content_type = "application/problem+json")]
    Invalid(Problem),
}

/// Documented error answers of a file upload (its body is the file, not JSON).
#[allow(dead_code)] // Only read by the OpenAPI derive.
#[derive(utoipa::IntoResponses)]
pub enum FileErrors {
    /// The body could not be read (`unreadable_body`), or the `Authorization`
    /// header and the `access_token` query parameter name different tokens
    /// (`conflicting_tokens`).
    #[response(status = 400, content_type = "application/problem+json")]
    Malformed(Problem),
    /// The file is larger than `maxFileBytes` of `GET /widget/config`, or this
    /// server takes no files (`file_too_large`).
    #[response(status = 413, content_type = "application/problem+json")]
    TooLarge(Problem),
    /// The name is missing or the file empty; `errors` names `name` or `file`.
    #[response(status = 422, content_type = "application/problem+json")]
    Invalid(Problem),
}

/// Documented 404.
#[allow(dead_code)] // Only read by the OpenAPI derive.
#[derive(utoipa::IntoResponses)]
pub enum NotFoundError {
    /// No such object in this tenant (another tenant's ids answer the same).
    #[response(status = 404, content_type = "application/problem+json")]
    NotFound(Problem),
}

/// Documented 409.
#[allow(dead_code)] // Only read by the OpenAPI derive.
#[derive(utoipa::IntoResponses)]
pub enum ConflictError {
    /// The object conflicts with another (e.g. a taken slug); `errors` names the field.
    #[response(status = 409, content_type = "application/problem+json")]
    Conflict(Problem),
}
