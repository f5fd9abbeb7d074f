//! What generated links open: a co-browsing session, a live view, a conference.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// What a co-browsing link shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CobrowseView {
    /// `HOST` or `GUEST`.
    pub host: bool,
    /// The URL the session starts with.
    pub url: String,
    /// The host's e-mail, if named.
    pub host_email: Option<String>,
    /// When the link stops working, RFC 3339.
    pub expires_at: String,
}

/// Opens a co-browsing link (public: the token is the credential).
#[server(endpoint = "cobrowse_session")]
pub async fn cobrowse_session(session_id: String, token: String) -> Result<CobrowseView, ServerFnError> {
    let ctx = crate::ssr::context()?;
    let s = ctx
        .services
        .open_cobrowse(&session_id, &token)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(CobrowseView {
        host: s.role == rapport_core::links::CobrowseRole::Host,
        url: s.url,
        host_email: s.host_email,
        expires_at: s.expires_at.to_rfc3339(),
    })
}

/// A visitor session as live view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveSession {
    /// The visitor's id.
    pub visitor_id: String,
    /// Start, formatted in UTC.
    pub started_at: String,
    /// Pages seen.
    pub page_count: i32,
    /// The first page.
    pub entry_url: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
}

/// A recorded session, for live view (agents and up).
#[server(endpoint = "liveview_session")]
pub async fn liveview_session(session_id: String) -> Result<LiveSession, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let s = ctx
        .services
        .get_recorded_session(&user.tenant_id, &session_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(LiveSession {
        visitor_id: s.visitor_id,
        started_at: s.started_at.format("%Y-%m-%d %H:%M UTC").to_string(),
        page_count: s.page_count,
        entry_url: s.entry_url,
        tags: s.tags,
    })
}

/// What a conference join link shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JoinView {
    /// Title.
    pub title: String,
    /// Start, RFC 3339.
    pub starts_at: String,
    /// Length in minutes.
    pub duration_minutes: i32,
    /// IANA time zone.
    pub timezone: String,
    /// `open`, `not_yet`, `ended` or `disabled`.
    pub state: String,
    /// When the link starts working, RFC 3339.
    pub valid_from: String,
    /// When it stops, RFC 3339.
    pub valid_until: String,
    /// Guests wait to be let in.
    pub waiting_room: bool,
    /// A password is asked.
    pub has_password: bool,
}

/// Opens an appointment's join link (public: the token is the credential).
#[server(endpoint = "join_info")]
pub async fn join_info(token: String) -> Result<JoinView, ServerFnError> {
    let ctx = crate::ssr::context()?;
    let (_, a) = ctx
        .services
        .appointment_by_join_token(&token)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let now = chrono::Utc::now();
    let state = if !a.valid {
        "disabled"
    } else if now < a.valid_from {
        "not_yet"
    } else if now >= a.valid_until {
        "ended"
    } else {
        "open"
    };
    Ok(JoinView {
        title: a.title,
        starts_at: a.date.to_rfc3339(),
        duration_minutes: a.duration_in_minutes,
        timezone: a.timezone_id,
        state: state.to_string(),
        valid_from: a.valid_from.to_rfc3339(),
        valid_until: a.valid_until.to_rfc3339(),
        waiting_room: a.permissions.enable_waiting_room,
        has_password: a.has_password,
    })
}
