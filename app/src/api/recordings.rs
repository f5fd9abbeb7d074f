//! Recorded visitor sessions in the dashboard: the list (agents and up), one
//! session's facts for its replay and live view, the latest recording of a
//! conversation's customer (the inbox links to it), and the workspace's
//! recording settings (admins).

use leptos::prelude::*;
use rapport_core::model::PageInfo;
use serde::{Deserialize, Serialize};

/// Where recorded sessions are listed.
pub const SESSIONS_PATH: &str = "/sessions";

/// Sessions per page.
pub const SESSIONS_PER_PAGE: i64 = 25;

/// A recorded session as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    /// Id.
    pub id: String,
    /// The script's visitor id.
    pub visitor_id: String,
    /// The id given with `Rapport.identify`.
    pub external_id: Option<String>,
    /// The first page.
    pub entry_url: Option<String>,
    /// Pages seen.
    pub page_count: i32,
    /// Start (RFC 3339, UTC).
    pub started_at: String,
    /// Last event (RFC 3339, UTC).
    pub ended_at: Option<String>,
    /// Length in seconds, once it has an end.
    pub duration_seconds: Option<i64>,
    /// Tags.
    pub tags: Vec<String>,
    /// Why it was recorded, once it ended (`CHAT`, `LIVE_VIEW`, `ERROR`, `BROWSE`).
    pub reason: Option<String>,
}

#[cfg(feature = "ssr")]
impl From<rapport_core::sessions::RecordedSession> for SessionView {
    fn from(s: rapport_core::sessions::RecordedSession) -> Self {
        SessionView {
            id: s.id,
            visitor_id: s.visitor_id,
            external_id: s.external_id,
            entry_url: s.entry_url,
            page_count: s.page_count,
            started_at: s.started_at.to_rfc3339(),
            ended_at: s.ended_at.map(|e| e.to_rfc3339()),
            duration_seconds: s.duration_seconds,
            tags: s.tags,
            reason: s.reason,
        }
    }
}

/// A page of sessions, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsPage {
    /// The sessions on this page.
    pub items: Vec<SessionView>,
    /// Where the page sits.
    pub page: PageInfo,
}

/// The tenant's recorded sessions carrying `tag` (all when empty), newest first.
#[server(endpoint = "list_sessions")]
pub async fn list_sessions(tag: Option<String>, page: Option<i64>) -> Result<SessionsPage, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    use rapport_core::sessions::{Pageable, RecordedSessionsQuery, SessionFilter};
    let (ctx, user) = require_role(rapport_core::model::Role::Agent).await?;
    let query = RecordedSessionsQuery {
        tag_filter: SessionFilter {
            tags_filter: tag.filter(|t| !t.trim().is_empty()).into_iter().collect(),
        },
        pageable: Pageable {
            page_number: Some(page.unwrap_or(0).max(0)),
            page_size: Some(SESSIONS_PER_PAGE),
            ..Default::default()
        },
    };
    let listed = ctx
        .services
        .list_recorded_sessions(&user.tenant_id, &query)
        .await
        .map_err(to_server_error)?;
    Ok(SessionsPage {
        items: listed.results.into_iter().map(SessionView::from).collect(),
        page: listed.page,
    })
}

/// One recorded session of the tenant (agents and up).
#[server(endpoint = "get_session")]
pub async fn get_session(id: String) -> Result<SessionView, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Agent).await?;
    ctx.services
        .get_recorded_session(&user.tenant_id, &id)
        .await
        .map(SessionView::from)
        .map_err(to_server_error)
}

/// The latest recorded session of a conversation's customer, if any.
#[server(endpoint = "customer_session")]
pub async fn customer_session(customer_id: String) -> Result<Option<SessionView>, ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use crate::ssr::{require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Agent).await?;
    ctx.services
        .latest_recording_of_customer(&user.tenant_id, &customer_id)
        .await
        .map(|s| s.map(SessionView::from))
        .map_err(to_server_error)
}

/// The workspace's recording settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordingView {
    /// Whether the visitor script records sessions.
    pub enabled: bool,
    /// Record only visitors who consented.
    pub require_consent: bool,
    /// CSS selector of text to mask.
    pub mask_selector: String,
    /// CSS selector of elements to leave out.
    pub block_selector: String,
    /// Days a recording is kept.
    pub retention_days: i64,
    /// Days a video call's recording is kept.
    pub conference_retention_days: i64,
}

#[cfg(feature = "ssr")]
impl From<rapport_core::recordings::RecordingSettings> for RecordingView {
    fn from(s: rapport_core::recordings::RecordingSettings) -> Self {
        RecordingView {
            enabled: s.enabled,
            require_consent: s.require_consent,
            mask_selector: s.mask_selector.unwrap_or_default(),
            block_selector: s.block_selector.unwrap_or_default(),
            retention_days: s.retention_days,
            conference_retention_days: s.conference_retention_days,
        }
    }
}

/// The workspace's recording settings (admins).
#[server(endpoint = "get_recording_settings")]
pub async fn get_recording_settings() -> Result<RecordingView, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Admin).await?;
    ctx.services
        .recording_settings(&user.tenant_id)
        .await
        .map(RecordingView::from)
        .map_err(to_server_error)
}

/// Saves the recording settings (admins). Unticked boxes are not sent by the
/// form, so they arrive as `None` and mean "off".
#[server(endpoint = "update_recording_settings")]
pub async fn update_recording_settings(
    enabled: Option<String>,
    require_consent: Option<String>,
    mask_selector: String,
    block_selector: String,
    retention_days: String,
    conference_retention_days: String,
) -> Result<RecordingView, ServerFnError> {
    use crate::ssr::{actor, require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Admin).await?;
    let days = |field: &'static str, value: &str| {
        value.trim().parse::<i64>().map_err(|_| {
            to_server_error(rapport_core::CoreError::invalid(
                field,
                "invalid_type",
                "a whole number of days",
            ))
        })
    };
    let retention_days = days("retentionDays", &retention_days)?;
    let conference_retention_days = days("conferenceRetentionDays", &conference_retention_days)?;
    ctx.services
        .set_recording_settings(
            &user.tenant_id,
            rapport_core::recordings::RecordingSettingsIn {
                enabled: Some(enabled.is_some()),
                require_consent: Some(require_consent.is_some()),
                mask_selector: Some(mask_selector),
                block_selector: Some(block_selector),
                retention_days: Some(retention_days),
                conference_retention_days: Some(conference_retention_days),
            },
            &actor(&user),
        )
        .await
        .map(RecordingView::from)
        .map_err(to_server_error)
}
