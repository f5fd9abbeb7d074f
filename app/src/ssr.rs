//! Server-side helpers for server functions and pages: the dashboard's context,
//! session cookies, and the session/role checks every server function starts with.

use std::sync::Arc;

use axum::http::{header, request::Parts, HeaderMap, HeaderValue, StatusCode};
use leptos::prelude::*;
use leptos_axum::ResponseOptions;
use rapport_core::{model::Role, model::SessionUser, CoreError, Services};

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "rapport_session";
/// Name of the cookie that carries a live-view grant: it opens the live view of
/// one visitor session and is never a dashboard session (see
/// `rapport_core::links`).
pub const LIVEVIEW_COOKIE: &str = "rapport_liveview";
/// Name of the one-time cookie that carries a just-created secret to the page after
/// a form post without JavaScript (the secret is never stored server-side).
pub const FLASH_COOKIE: &str = "rapport_flash";

/// What the server provides to every page render and server function.
#[derive(Clone)]
pub struct DashboardContext {
    /// The domain services.
    pub services: Services,
    /// Whether cookies get the `Secure` attribute (public URL is https).
    pub secure_cookies: bool,
    /// The OpenAPI document, for the API reference page.
    pub openapi: Arc<serde_json::Value>,
    /// Whether mail goes to an SMTP server; else it is kept in the outbox.
    pub smtp_configured: bool,
    /// The base URL under which users reach Rapport (`RAPPORT_PUBLIC_URL`), for
    /// what is pasted elsewhere: the visitor script's snippet.
    pub public_url: String,
    /// Why universal co-browsing cannot run on this instance (no Chromium), if so.
    pub cobrowse_unavailable: Option<String>,
}

/// The Content-Security-Policy of a dashboard page whose inline scripts carry
/// `nonce`:
/// - scripts run only with the page's nonce, or when a script that has it
///   loads them (`'strict-dynamic'`: the wasm bundle, lazy pages' chunks, the
///   replay and call scripts); the wasm needs `'wasm-unsafe-eval'`;
/// - a replay or live view rebuilds a visitor's recorded page in a frame of
///   this origin. rrweb's sandbox keeps its scripts from running, and this
///   policy, which the frame inherits, keeps them out a second time. The
///   recorded page's own styles, fonts and pictures must show, so those may
///   come from anywhere (styles inline too); nothing else may;
/// - no page of Rapport is framed by another site, posts forms elsewhere, or
///   changes its base URL.
pub fn content_security_policy(nonce: &str) -> String {
    format!(
        "default-src 'self'; script-src 'nonce-{nonce}' 'strict-dynamic' 'wasm-unsafe-eval'; \
         style-src * 'unsafe-inline'; img-src * data: blob:; font-src * data:; \
         media-src 'self' blob: mediastream:; connect-src 'self'; frame-src 'self' blob:; \
         worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'"
    )
}

/// Puts [`content_security_policy`] on the page being rendered, with the
/// nonce Leptos gave its inline scripts for this response.
pub fn send_content_security_policy() {
    let (Some(nonce), Some(response)) = (leptos::nonce::use_nonce(), use_context::<ResponseOptions>()) else {
        return;
    };
    if let Ok(value) = HeaderValue::from_str(&content_security_policy(&nonce)) {
        response.insert_header(header::CONTENT_SECURITY_POLICY, value);
    }
}

/// The context, or an error if the server forgot to provide it.
pub fn context() -> Result<DashboardContext, ServerFnError> {
    use_context::<DashboardContext>().ok_or_else(|| ServerFnError::new("dashboard context missing"))
}

/// The session token in a request's cookies.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, SESSION_COOKIE)
}

/// A cookie's value from a request's `Cookie` headers.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .map(|c| c.value().to_string())
}

fn build_cookie(name: &str, value: String, secure: bool, path: &str, max_age: cookie::time::Duration) -> String {
    cookie::Cookie::build((name.to_string(), value))
        .http_only(true)
        .same_site(cookie::SameSite::Lax)
        .secure(secure)
        .path(path.to_string())
        .max_age(max_age)
        .build()
        .to_string()
}

/// `Set-Cookie` value for a new session.
pub fn session_cookie(token: &str, secure: bool) -> String {
    let max_age = cookie::time::Duration::milliseconds(rapport_core::auth::SESSION_IDLE_MS);
    build_cookie(SESSION_COOKIE, token.to_string(), secure, "/", max_age)
}

/// `Set-Cookie` value for a live-view grant that lapses at `until` (unix ms) at the
/// latest.
pub fn liveview_cookie(grant: &str, secure: bool, until: i64) -> String {
    let left = (until - chrono::Utc::now().timestamp_millis()).max(0);
    build_cookie(
        LIVEVIEW_COOKIE,
        grant.to_string(),
        secure,
        "/",
        cookie::time::Duration::milliseconds(left),
    )
}

/// `Set-Cookie` value that removes the session cookie.
pub fn clear_session_cookie(secure: bool) -> String {
    build_cookie(SESSION_COOKIE, String::new(), secure, "/", cookie::time::Duration::ZERO)
}

/// `Set-Cookie` value carrying a one-time secret to `path` for a minute.
pub fn flash_cookie(value: &str, secure: bool, path: &str) -> String {
    build_cookie(
        FLASH_COOKIE,
        value.to_string(),
        secure,
        path,
        cookie::time::Duration::seconds(60),
    )
}

/// `Set-Cookie` value that removes the flash cookie of `path`.
pub fn clear_flash_cookie(secure: bool, path: &str) -> String {
    build_cookie(FLASH_COOKIE, String::new(), secure, path, cookie::time::Duration::ZERO)
}

/// The request's headers (during a page render or a server function).
pub fn request_parts() -> Result<Parts, ServerFnError> {
    use_context::<Parts>().ok_or_else(|| ServerFnError::new("request missing"))
}

/// Whether the current request is a plain HTML form post (JavaScript off).
pub fn is_plain_form_post() -> bool {
    use_context::<Parts>()
        .and_then(|p| {
            p.headers
                .get(header::ACCEPT)
                .and_then(|v| v.to_str().ok())
                .map(|a| a.contains("text/html"))
        })
        .unwrap_or(false)
}

/// After a form post without JavaScript, the page the browser is sent back to
/// cannot see the server function's answer. When that answer holds a secret shown
/// once (a new API key, a generated password), it rides along in a one-minute,
/// HttpOnly cookie scoped to `path`, which [`take_flash`] reads and clears. With
/// JavaScript the answer arrives directly and no cookie is set.
pub fn put_flash<T: serde::Serialize>(ctx: &DashboardContext, path: &str, value: &T) {
    use base64::Engine;
    if !is_plain_form_post() {
        return;
    }
    if let Ok(json) = serde_json::to_string(value) {
        let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json);
        set_cookie(&flash_cookie(&encoded, ctx.secure_cookies, path));
    }
}

/// Reads and clears the flash value of `path` (see [`put_flash`]).
pub fn take_flash<T: serde::de::DeserializeOwned>(ctx: &DashboardContext, path: &str) -> Option<T> {
    use base64::Engine;
    let raw = cookie_value(&request_parts().ok()?.headers, FLASH_COOKIE)?;
    set_cookie(&clear_flash_cookie(ctx.secure_cookies, path));
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(raw).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Adds a `Set-Cookie` header to the current response.
pub fn set_cookie(value: &str) {
    if let (Some(response), Ok(value)) = (use_context::<ResponseOptions>(), HeaderValue::from_str(value)) {
        response.append_header(header::SET_COOKIE, value);
    }
}

/// The signed-in user, if any.
pub async fn optional_user() -> Result<Option<SessionUser>, ServerFnError> {
    let ctx = context()?;
    let Some(token) = session_token(&request_parts()?.headers) else {
        return Ok(None);
    };
    ctx.services.session_user(&token).await.map_err(to_server_error)
}

/// The signed-in user with at least `role`; 401 or 403 otherwise.
pub async fn require_role(role: Role) -> Result<(DashboardContext, SessionUser), ServerFnError> {
    let user = optional_user()
        .await?
        .ok_or_else(|| fail(StatusCode::UNAUTHORIZED, "sign in first"))?;
    if !user.role.includes(role) {
        return Err(fail(StatusCode::FORBIDDEN, "your role does not allow this"));
    }
    Ok((context()?, user))
}

/// The signed-in user, who must be a platform admin; 401 or 403 otherwise.
pub async fn require_platform_admin() -> Result<(DashboardContext, SessionUser), ServerFnError> {
    let user = optional_user()
        .await?
        .ok_or_else(|| fail(StatusCode::UNAUTHORIZED, "sign in first"))?;
    if !user.platform_admin {
        return Err(fail(StatusCode::FORBIDDEN, "only platform admins may do this"));
    }
    Ok((context()?, user))
}

/// A 401 or 403 with `message`. A server function called over HTTP answers
/// with that status; on a page the server renders, the status is the page's
/// business: there `Guard` redirects a signed-out visitor to the login page,
/// and the page's resources, which fail with 401 meanwhile, must not turn
/// that redirect into a 401.
fn fail(status: StatusCode, message: &str) -> ServerFnError {
    let server_fn_call = use_context::<Parts>().is_some_and(|p| p.uri.path().starts_with("/api/"));
    if let (true, Some(response)) = (server_fn_call, use_context::<ResponseOptions>()) {
        response.set_status(status);
    }
    ServerFnError::new(message)
}

/// The signed-in user as the actor of a write, with the client's IP and the
/// request id, for the audit log.
pub fn actor(user: &SessionUser) -> rapport_core::audit::Actor {
    let parts = use_context::<Parts>();
    let ip = parts
        .as_ref()
        .and_then(|p| p.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>())
        .map(|ci| ci.0.ip().to_string());
    let request_id = parts
        .as_ref()
        .and_then(|p| p.headers.get("x-request-id"))
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    rapport_core::audit::Actor {
        kind: rapport_core::audit::ActorKind::User,
        id: user.id.to_string(),
        ip,
        request_id,
    }
}

/// Maps a domain error to what the dashboard may show: client errors say what is
/// wrong, internal ones are logged and shown as a generic sentence.
pub fn to_server_error(err: CoreError) -> ServerFnError {
    match err {
        CoreError::Validation(fields) => {
            if let Some(response) = use_context::<ResponseOptions>() {
                response.set_status(StatusCode::UNPROCESSABLE_ENTITY);
            }
            crate::api::problem::Problem {
                message: fields.iter().map(|f| f.message.clone()).collect::<Vec<_>>().join("; "),
                fields: fields
                    .into_iter()
                    .map(|f| crate::api::problem::FieldProblem {
                        field: f.field,
                        message: f.message,
                    })
                    .collect(),
            }
            .into_error()
        }
        CoreError::Internal(cause) => {
            tracing::error!(error = %cause, "internal error in a server function");
            fail(
                StatusCode::INTERNAL_SERVER_ERROR,
                "something went wrong; please try again",
            )
        }
        CoreError::Conflict { message, .. } => fail(StatusCode::CONFLICT, &message),
        CoreError::Denied { message, .. } => fail(StatusCode::FORBIDDEN, &message),
        CoreError::TooLarge { message, .. } => fail(StatusCode::PAYLOAD_TOO_LARGE, &message),
        CoreError::AllowanceSpent { message, .. } => fail(StatusCode::TOO_MANY_REQUESTS, &message),
        CoreError::NotFound(_) => fail(StatusCode::NOT_FOUND, &err.to_string()),
        other => ServerFnError::new(other.to_string()),
    }
}
