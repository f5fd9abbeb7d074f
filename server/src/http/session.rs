//! Dashboard sign-in and sign-out: plain form posts, so they work without
//! JavaScript. Success redirects with a fresh session cookie; failure redirects
//! back to the login page with an error code (never the password).

use axum::{
    extract::State,
    http::{header, HeaderMap, HeaderValue, StatusCode},
    response::{IntoResponse, Redirect, Response},
    Form,
};
use rapport_app::ssr::{clear_session_cookie, liveview_cookie, session_cookie, session_token};
use rapport_core::{
    audit::{Actor, ActorKind},
    auth::LoginInput,
    sign_ins::SignInDevice,
    CoreError,
};
use serde::Deserialize;

use crate::{http::client_ip::ClientIp, state::AppState};

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
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    if state.limiters.check_login(ip, &form.email).await.is_err() {
        tracing::warn!("login rate limit reached");
        return back_to_login("rate_limited", &form);
    }
    let input = LoginInput {
        workspace: Some(form.workspace.clone()),
        email: form.email.clone(),
        password: form.password.clone(),
    };
    let device = SignInDevice {
        ip: Some(ip.to_string()),
        user_agent: headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string),
    };
    match state.services.login_on(&input, &device).await {
        Ok(outcome) => {
            // Rotation: whatever session the browser had is ended, a new one starts.
            if let Some(old) = session_token(&headers) {
                let _ = state.services.logout(&old).await;
            }
            tracing::info!(user_id = %outcome.user.id, tenant_id = %outcome.user.tenant_id, "signed in");
            state.limiters.login_succeeded(ip, &form.email).await;
            let actor = Actor {
                kind: ActorKind::User,
                id: outcome.user.id.to_string(),
                ip: Some(ip.to_string()),
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
            let next = rapport_core::redirects::local_path(&form.next).unwrap_or("/");
            let cookie = session_cookie(&outcome.session_token, state.config.secure_cookies());
            with_cookie(Redirect::to(next).into_response(), &cookie)
        }
        Err(CoreError::Validation(_)) => back_to_login("workspace_required", &form),
        Err(CoreError::Unauthenticated) => {
            state.limiters.login_failed(ip, &form.email).await;
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

/// The live-view link's token (the query of the link, the field of its form).
#[derive(Debug, Deserialize)]
pub struct LiveViewOpen {
    token: String,
}

/// The confirmation page's words, in the live view's five languages: title,
/// explanation, button.
fn liveview_words(lang: &str) -> (&'static str, &'static str, &'static str) {
    match lang {
        "de" => (
            "Live-Ansicht",
            "Dieser Link öffnet die Live-Ansicht einer Besuchersitzung, einmalig.",
            "Live-Ansicht öffnen",
        ),
        "jp" => (
            "ライブビュー",
            "このリンクで訪問者セッションのライブビューを一度だけ開けます。",
            "ライブビューを開く",
        ),
        "uk" => (
            "Перегляд наживо",
            "Це посилання один раз відкриває перегляд сеансу відвідувача наживо.",
            "Відкрити перегляд",
        ),
        "ru" => (
            "Просмотр в реальном времени",
            "Эта ссылка один раз открывает просмотр сеанса посетителя в реальном времени.",
            "Открыть просмотр",
        ),
        _ => (
            "Live view",
            "This link opens the live view of a visitor's session, once.",
            "Open the live view",
        ),
    }
}

/// `GET /liveview/open?token=…`: the page of a single-use live-view link. It
/// only shows a button: link scanners in mail and chat fetch every link they
/// see, and a GET that spent the link would leave nothing for its addressee.
/// A link that cannot be opened (any more) goes to the sign-in page, which
/// says so.
pub async fn liveview_page(
    State(state): State<AppState>,
    axum::extract::Query(query): axum::extract::Query<LiveViewOpen>,
) -> Response {
    let lang = match state.services.liveview_link_language(&query.token).await {
        Ok(lang) => lang,
        Err(CoreError::Unauthenticated) => return Redirect::to("/login?error=link_invalid").into_response(),
        Err(err) => {
            tracing::error!(error = %err, "reading a live-view link failed");
            return Redirect::to("/login?error=unavailable").into_response();
        }
    };
    let (title, explanation, button) = liveview_words(&lang);
    let html_lang = rapport_app::language::html_lang(&lang);
    // Tokens are URL-safe base64: anything else is no token of ours.
    let token: String = query
        .token
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect();
    let html = format!(
        "<!DOCTYPE html><html lang=\"{html_lang}\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title} · Rapport</title><link rel=\"stylesheet\" href=\"/pkg/rapport.css\"></head>\
         <body><main id=\"main\" class=\"login\"><form class=\"card login-card\" method=\"post\" action=\"/liveview/open\">\
         <h1>{title}</h1><p>{explanation}</p><input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <button type=\"submit\" class=\"button primary\">{button}</button></form></main></body></html>"
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            // The token is in this page's address: it goes to no other site.
            // (`no-referrer` would make the button's post say `Origin: null`.)
            (header::REFERRER_POLICY, "same-origin"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
                 base-uri 'none'; frame-ancestors 'none'",
            ),
        ],
        html,
    )
        .into_response()
}

/// `POST /liveview/open` (the page's button): uses the single-use live-view
/// link and opens the live view of its session in the link's language. The
/// browser gets a grant cookie for that view only; a dashboard session it may
/// already have is left as it is, and names the opener in the audit log.
pub async fn open_liveview(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    Form(form): Form<LiveViewOpen>,
) -> Response {
    let signed_in = match session_token(&headers) {
        Some(token) => state.services.session_user(&token).await.ok().flatten(),
        None => None,
    };
    let opened_by = signed_in.as_ref().map(|u| (u.tenant_id.as_str(), u.id.as_str()));
    match state
        .services
        .open_liveview(&form.token, Some(ip.to_string()), opened_by)
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
