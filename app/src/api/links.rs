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
    /// Why co-browsing cannot run on this server (no Chromium), if so.
    pub unavailable: Option<String>,
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
        unavailable: ctx.cobrowse_unavailable.clone(),
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

/// A recorded session, for live view: for the holder of a live-view grant for this
/// very session (an opened live-view link), or for a signed-in agent (and up) of
/// its tenant. A grant for another session counts for nothing here.
#[server(endpoint = "liveview_session")]
pub async fn liveview_session(session_id: String) -> Result<LiveSession, ServerFnError> {
    let ctx = crate::ssr::context()?;
    let headers = crate::ssr::request_parts()?.headers;
    let granted = match crate::ssr::cookie_value(&headers, crate::ssr::LIVEVIEW_COOKIE) {
        Some(grant) => match ctx.services.liveview_grant(&grant, &session_id).await {
            Ok(grant) => Some(grant.tenant_id),
            Err(rapport_core::CoreError::Unauthenticated) => None,
            Err(e) => return Err(crate::ssr::to_server_error(e)),
        },
        None => None,
    };
    let tenant_id = match granted {
        Some(tenant_id) => tenant_id,
        None => {
            crate::ssr::require_role(rapport_core::model::Role::Agent)
                .await?
                .1
                .tenant_id
        }
    };
    let s = ctx
        .services
        .get_recorded_session(&tenant_id, &session_id)
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

/// Where agents generate links; the no-JavaScript flash cookie is scoped to it.
pub const LINKS_PATH: &str = "/links";

/// The links of the last form post without JavaScript (see `put_flash`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Generated {
    /// Co-browsing links, if those were generated.
    pub cobrowse: Option<GeneratedCobrowse>,
    /// A live-view link, if that was generated.
    pub liveview: Option<GeneratedLiveView>,
}

/// Takes the links generated by the last form post without JavaScript, once.
#[server(endpoint = "take_generated_links")]
pub async fn take_generated_links() -> Result<Generated, ServerFnError> {
    let (ctx, _user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    Ok(crate::ssr::take_flash(&ctx, LINKS_PATH).unwrap_or_default())
}

/// Co-browsing links an agent generated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedCobrowse {
    /// The URL the session starts with.
    pub url: String,
    /// Link for the host (the agent).
    pub host_link: String,
    /// Link to send to the customer.
    pub join_link: String,
    /// When both stop working, RFC 3339.
    pub expires_at: String,
}

/// Generates co-browsing links for `url`, hosted by the signed-in user (agents and up).
#[server(endpoint = "generate_cobrowse_links")]
pub async fn generate_cobrowse_links(url: String) -> Result<GeneratedCobrowse, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let links = ctx
        .services
        .create_cobrowse_links(
            &user.tenant_id,
            rapport_core::links::CobrowseLinkRequest {
                url: Some(url.trim().to_string()),
                user_email: Some(user.email.clone()),
            },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    let generated = GeneratedCobrowse {
        url: url.trim().to_string(),
        host_link: links.host_link,
        join_link: links.join_link,
        expires_at: links.expires_at.to_rfc3339(),
    };
    let flash = Generated {
        cobrowse: Some(generated.clone()),
        liveview: None,
    };
    crate::ssr::put_flash(&ctx, LINKS_PATH, &flash);
    Ok(generated)
}

/// A recorded session to pick for live view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionChoice {
    /// Session id.
    pub id: String,
    /// The visitor's id.
    pub visitor_id: String,
    /// Start, formatted in UTC.
    pub started_at: String,
    /// Whether the browser is still open.
    pub live: bool,
    /// Pages seen.
    pub page_count: i32,
    /// The first page.
    pub entry_url: Option<String>,
    /// Tags.
    pub tags: Vec<String>,
}

/// The newest recorded sessions, optionally only those carrying `tag` (agents and up).
#[server(endpoint = "recent_sessions")]
pub async fn recent_sessions(tag: Option<String>) -> Result<Vec<SessionChoice>, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let mut query = rapport_core::sessions::RecordedSessionsQuery::default();
    query.pageable.page_size = Some(20);
    if let Some(tag) = tag.map(|t| t.trim().to_string()).filter(|t| !t.is_empty()) {
        query.tag_filter.tags_filter = vec![tag];
    }
    Ok(ctx
        .services
        .list_recorded_sessions(&user.tenant_id, &query)
        .await
        .map_err(crate::ssr::to_server_error)?
        .results
        .into_iter()
        .map(|s| SessionChoice {
            id: s.id,
            visitor_id: s.visitor_id,
            started_at: s.started_at.format("%Y-%m-%d %H:%M UTC").to_string(),
            live: s.ended_at.is_none(),
            page_count: s.page_count,
            entry_url: s.entry_url,
            tags: s.tags,
        })
        .collect())
}

/// A generated live-view link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedLiveView {
    /// The session it shows.
    pub session_id: String,
    /// The public link; it works once.
    pub link: String,
    /// When it stops working if unused, RFC 3339.
    pub expires_at: String,
}

/// Generates a public live-view link to `session_id` in `language`, signing in as
/// the signed-in user (agents and up).
#[server(endpoint = "generate_liveview_link")]
pub async fn generate_liveview_link(
    session_id: Option<String>,
    language: Option<String>,
) -> Result<GeneratedLiveView, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let link = ctx
        .services
        .create_liveview_link(
            &user.tenant_id,
            rapport_core::links::LiveViewLinkRequest {
                session_id: session_id.clone(),
                email: Some(user.email.clone()),
                language,
            },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    let generated = GeneratedLiveView {
        session_id: session_id.unwrap_or_default(),
        link: link.link,
        expires_at: link.expires_at.to_rfc3339(),
    };
    let flash = Generated {
        cobrowse: None,
        liveview: Some(generated.clone()),
    };
    crate::ssr::put_flash(&ctx, LINKS_PATH, &flash);
    Ok(generated)
}
