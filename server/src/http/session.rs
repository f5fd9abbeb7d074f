//! Dashboard sign-in and sign-out: plain form posts, so they work without
//! JavaScript. Success redirects with a fresh session cookie; failure redirects
//! back to the login page with an error code (never the password).

use axum::{
    extract::{ConnectInfo, State},
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Redirect, Response},
    Form,
};
use rapport_app::ssr::{clear_session_cookie, liveview_cookie, session_cookie, session_token};
use rapport_core::{
    audit::{Actor, ActorKind},
    auth::LoginInput,
    CoreError,
};
use serde::Deserialize;
use std::net::SocketAddr;

use crate::state::AppState;

/// The login form.
#[derive(Debug, Deserialize)]
pub struct LoginForm {
    #[serde(default)]
    workspace: String,
    email: String,
    password: String,
    #[serde(default)]
    next: String,
}

fn with_cookie(mut response: Response, cookie: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
    response
}

fn back_to_login(error: &str, form: &LoginForm) -> Response {
    let query = serde_urlencoded::to_string([
        ("error", error),
        ("email", form.email.as_str()),
        ("workspace", form.workspace.as_str()),
    ])
    .unwrap_or_default();
    Redirect::to(&format!("/login?{query}")).into_response()
}

/// `POST /auth/login`.
pub async fn login(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    if state.limiters.check_login(peer.ip(), &form.email).is_err() {
        tracing::warn!("login rate limit reached");
        return back_to_login("rate_limited", &form);
    }
    let input = LoginInput {
        workspace: Some(form.workspace.clone()),
        email: form.email.clone(),
        password: form.password.clone(),
    };
    match state.services.login(&input).await {
        Ok(outcome) => {
            // Rotation: whatever session the browser had is ended, a new one starts.
            if let Some(old) = session_token(&headers) {
                let _ = state.services.logout(&old).await;
            }
            tracing::info!(user_id = %outcome.user.id, tenant_id = %outcome.user.tenant_id, "signed in");
            let actor = Actor {
                kind: ActorKind::User,
                id: outcome.user.id.clone(),
                ip: Some(peer.ip().to_string()),
                request_id: headers
                    .get("x-request-id")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string),
            };
            if let Err(err) = state
                .services
                .audit(
                    Some(&outcome.user.tenant_id),
                    &actor,
                    "session.login",
                    "user",
                    Some(&outcome.user.id),
                )
                .await
            {
                tracing::error!(error = %err, "recording the sign-in failed");
            }
            let next = if form.next.starts_with('/') && !form.next.starts_with("//") {
                form.next.as_str()
            } else {
                "/"
            };
            let cookie = session_cookie(&outcome.session_token, state.config.secure_cookies());
            with_cookie(Redirect::to(next).into_response(), &cookie)
        }
        Err(CoreError::Validation(_)) => back_to_login("workspace_required", &form),
        Err(CoreError::Unauthenticated) => {
            state.limiters.login_failed(peer.ip(), &form.email);
            back_to_login("invalid", &form)
        }
        Err(err) => {
            tracing::error!(error = %err, "login failed");
            back_to_login("unavailable", &form)
        }
    }
}

/// `POST /auth/logout`.
pub async fn logout(State(state): State<AppState>, headers: HeaderMap) -> Response {
    if let Some(token) = session_token(&headers) {
        if let Err(err) = state.services.logout(&token).await {
            tracing::error!(error = %err, "logout failed");
            return (StatusCode::INTERNAL_SERVER_ERROR, "sign-out failed; please try again").into_response();
        }
    }
    let cookie = clear_session_cookie(state.config.secure_cookies());
    with_cookie(Redirect::to("/login?error=signed_out").into_response(), &cookie)
}

/// The live-view link's query.
#[derive(Debug, Deserialize)]
pub struct LiveViewOpen {
    token: String,
}

/// `GET /liveview/open?token=…`: uses a single-use live-view link and opens the live
/// view of its session in the link's language. The browser gets a grant cookie for
/// that view only; a dashboard session it may already have is left as it is.
pub async fn open_liveview(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    axum::extract::Query(query): axum::extract::Query<LiveViewOpen>,
) -> Response {
    match state
        .services
        .open_liveview(&query.token, Some(peer.ip().to_string()))
        .await
    {
        Ok(opened) => {
            let target = format!(
                "/liveview/{}?lang={}",
                form_urlencoded::byte_serialize(opened.session_id.as_bytes()).collect::<String>(),
                opened.language
            );
            let cookie = liveview_cookie(&opened.grant_token, state.config.secure_cookies(), opened.grant_until);
            with_cookie(Redirect::to(&target).into_response(), &cookie)
        }
        Err(CoreError::Unauthenticated) => Redirect::to("/login?error=link_invalid").into_response(),
        Err(err) => {
            tracing::error!(error = %err, "opening a live-view link failed");
            Redirect::to("/login?error=unavailable").into_response()
        }
    }
}
