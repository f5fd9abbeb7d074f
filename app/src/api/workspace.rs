//! The workspace's own settings (admins): name, time zone, the widget key the
//! visitor script authenticates with, and the settings the engines read (default
//! language, default agent capacity, business hours).

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where the workspace settings live.
pub const WORKSPACE_PATH: &str = "/settings/workspace";

/// The workspace as its settings page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceView {
    /// Display name.
    pub name: String,
    /// Handle used at sign-in.
    pub slug: String,
    /// IANA time zone: reports are cut in it.
    pub timezone: String,
    /// The key the visitor script and widget send (public, but rotatable).
    pub widget_key: String,
    /// The HTML that embeds the visitor script on a website, with the key.
    pub snippet: String,
    /// Default language (BCP 47) of system messages.
    pub language: String,
    /// Default agent capacity: open conversations at once.
    pub max_chats: i64,
    /// The opening hours SLA clocks run on; `None`: around the clock.
    pub business_hours_id: Option<String>,
    /// Whether the chat asks visitors to rate closed conversations (CSAT).
    pub csat_enabled: bool,
    /// Whether agents see what visitors type before they send it.
    pub typing_preview: bool,
    /// Whether closed conversations' transcripts are mailed to customers.
    pub transcript_on_close: bool,
    /// After how many minutes an unseen reply goes by mail (0: never).
    pub reply_by_mail_minutes: i64,
    /// The tenant's opening hours to choose from, as `(id, name)`.
    pub opening_hours: Vec<(String, String)>,
    /// What the visitor script records.
    pub recording: crate::api::recordings::RecordingView,
    /// Refuse visitor identities the website did not sign.
    pub identity_required: bool,
    /// The key the website signs visitor identities with, once made.
    pub identity_secret: Option<String>,
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

#[cfg(feature = "ssr")]
async fn load(
    ctx: &crate::ssr::DashboardContext,
    tenant_id: &rapport_core::ids::TenantId,
) -> Result<WorkspaceView, ServerFnError> {
    let tenant = ctx
        .services
        .get_tenant(tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let widget_key = ctx
        .services
        .widget_key(tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let opening_hours = ctx
        .services
        .config_all::<rapport_core::config::opening_hours::OpeningHours>(tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .map(|h| (h.meta.id.unwrap_or_default(), h.name.unwrap_or_default()))
        .collect();
    let recording = ctx
        .services
        .recording_settings(tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into();
    let identity = ctx
        .services
        .identity_settings(tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(WorkspaceView {
        recording,
        identity_required: identity.required,
        identity_secret: identity.secret,
        name: tenant.name,
        slug: tenant.slug,
        timezone: tenant.timezone,
        snippet: snippet(&ctx.public_url, &widget_key),
        widget_key,
        language: tenant.language,
        max_chats: tenant.max_chats,
        business_hours_id: tenant.business_hours_id,
        csat_enabled: tenant.csat_enabled,
        typing_preview: tenant.typing_preview,
        transcript_on_close: tenant.transcript_on_close,
        reply_by_mail_minutes: tenant.reply_by_mail_minutes,
        opening_hours,
    })
}

/// The tag a website embeds to load the visitor script: one async script, so the
/// page never waits for it and works on when Rapport cannot be reached.
pub fn snippet(public_url: &str, widget_key: &str) -> String {
    format!(
        "<script async src=\"{}/visitor/loader.js\" data-rapport-key=\"{}\"></script>",
        public_url.trim_end_matches('/'),
        widget_key
    )
}

/// The signed-in admin's workspace.
#[server(endpoint = "get_workspace")]
pub async fn get_workspace() -> Result<WorkspaceView, ServerFnError> {
    let (ctx, user) = admin().await?;
    load(&ctx, &user.tenant_id).await
}

/// Renames the workspace or changes its time zone. A new zone restarts the
/// daily report rollups at the next local midnight.
#[server(endpoint = "update_workspace")]
pub async fn update_workspace(name: String, timezone: String) -> Result<WorkspaceView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .update_tenant(
            &user.tenant_id,
            rapport_core::tenants::TenantUpdate {
                name: Some(name.trim().to_string()),
                slug: None,
                timezone: Some(timezone.trim().to_string()),
                ..Default::default()
            },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    load(&ctx, &user.tenant_id).await
}

/// Sets the conversation settings: the default language of system messages,
/// the default agent capacity (a number 1–100), the business hours (an opening
/// hours id; empty: around the clock), whether the chat asks visitors to
/// rate closed conversations (`csat` is `on`), whether agents see a
/// visitor's draft as it is typed (`typing_preview` is `on`), and whether a
/// closed conversation's transcript is mailed to the customer (`transcript`
/// is `on`), and after how many minutes an unseen reply goes by mail
/// (`reply_by_mail_minutes`, 0–1440; absent or blank keeps it).
#[server(endpoint = "update_engine_settings")]
pub async fn update_engine_settings(
    language: String,
    max_chats: String,
    business_hours_id: String,
    csat: Option<String>,
    typing_preview: Option<String>,
    transcript: Option<String>,
    reply_by_mail_minutes: Option<String>,
) -> Result<WorkspaceView, ServerFnError> {
    let (ctx, user) = admin().await?;
    let reply_by_mail_minutes = match reply_by_mail_minutes
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
    {
        None => None,
        Some(m) => Some(m.parse::<i64>().map_err(|_| {
            crate::ssr::to_server_error(rapport_core::CoreError::invalid(
                "replyByMailMinutes",
                "invalid_type",
                "the minutes must be a whole number from 0 to 1440",
            ))
        })?),
    };
    let max_chats = match max_chats.trim().parse::<i64>() {
        Ok(n) => n,
        Err(_) => {
            return Err(crate::ssr::to_server_error(rapport_core::CoreError::invalid(
                "maxChats",
                "invalid_type",
                "the default capacity must be a whole number from 1 to 100",
            )))
        }
    };
    let business_hours_id = Some(business_hours_id.trim().to_string()).filter(|id| !id.is_empty());
    ctx.services
        .update_tenant(
            &user.tenant_id,
            rapport_core::tenants::TenantUpdate {
                language: Some(language.trim().to_string()),
                max_chats: Some(max_chats),
                business_hours_id: Some(business_hours_id),
                csat_enabled: Some(csat.is_some()),
                typing_preview: Some(typing_preview.is_some()),
                transcript_on_close: Some(transcript.is_some()),
                reply_by_mail_minutes,
                ..Default::default()
            },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    load(&ctx, &user.tenant_id).await
}

/// Replaces the widget key; pages embedding the old one stop working.
#[server(endpoint = "rotate_widget_key")]
pub async fn rotate_widget_key() -> Result<WorkspaceView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .rotate_widget_key(&user.tenant_id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    load(&ctx, &user.tenant_id).await
}

/// Turns the refusal of unsigned visitor identities on (`required` is `on`) or
/// off; on makes a secret if there is none.
#[server(endpoint = "update_identity")]
pub async fn update_identity(required: Option<String>) -> Result<WorkspaceView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .set_identity_settings(
            &user.tenant_id,
            rapport_core::customers::IdentitySettingsIn {
                required: required.is_some(),
            },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    load(&ctx, &user.tenant_id).await
}

/// Replaces the identity secret; signatures made with the old one fail.
#[server(endpoint = "rotate_identity_secret")]
pub async fn rotate_identity_secret() -> Result<WorkspaceView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .rotate_identity_secret(&user.tenant_id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    load(&ctx, &user.tenant_id).await
}

/// Every IANA time zone name, for the zone picker.
#[server(endpoint = "time_zones")]
pub async fn time_zones() -> Result<Vec<String>, ServerFnError> {
    Ok(chrono_tz::TZ_VARIANTS.iter().map(|z| z.name().to_string()).collect())
}
