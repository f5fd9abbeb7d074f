//! How the tenant's alerts go out, from the Watchdogs page (admins): the
//! grouping period of watchdog alerts, the secret that signs alerts to
//! webhook receivers, and the state of each receiver URL.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The grouping periods the page offers, in minutes.
pub const WINDOW_MINUTES: [i64; 6] = [1, 5, 10, 15, 30, 60];

/// A webhook receiver URL and whether alerts reach it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertReceiverView {
    /// The URL.
    pub url: String,
    /// False once it answered `410 Gone` or failed for too long.
    pub enabled: bool,
    /// Why Rapport stopped sending to it.
    pub disabled_reason: Option<String>,
    /// Since when every attempt has failed (RFC 3339, UTC).
    pub failing_since: Option<String>,
}

/// The alert settings of the tenant.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertSettingsView {
    /// The grouping period, in seconds.
    pub window_seconds: i64,
    /// The webhook receiver URLs that have had alerts.
    pub receivers: Vec<AlertReceiverView>,
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// The grouping period and the receiver URLs.
#[server(endpoint = "alert_settings")]
pub async fn alert_settings() -> Result<AlertSettingsView, ServerFnError> {
    use crate::ssr::to_server_error;
    let (ctx, user) = admin().await?;
    let window_seconds = ctx
        .services
        .watchdog_window(&user.tenant_id)
        .await
        .map_err(to_server_error)?;
    let receivers = ctx
        .services
        .alert_receivers(&user.tenant_id)
        .await
        .map_err(to_server_error)?
        .into_iter()
        .map(|r| AlertReceiverView {
            url: r.url,
            enabled: r.enabled,
            disabled_reason: r.disabled_reason,
            failing_since: r.failing_since.map(|t| t.to_rfc3339()),
        })
        .collect();
    Ok(AlertSettingsView {
        window_seconds,
        receivers,
    })
}

/// Sets the grouping period, in minutes (1 to 1440); returns it.
#[server(endpoint = "set_alert_window")]
pub async fn set_alert_window(minutes: i64) -> Result<i64, ServerFnError> {
    use crate::ssr::{actor, to_server_error};
    let (ctx, user) = admin().await?;
    ctx.services
        .set_watchdog_window(&user.tenant_id, minutes.saturating_mul(60), &actor(&user))
        .await
        .map_err(|e| to_server_error(rename_field(e)))?;
    Ok(minutes)
}

/// The service names the period in seconds; the form asks for minutes.
#[cfg(feature = "ssr")]
fn rename_field(err: rapport_core::CoreError) -> rapport_core::CoreError {
    match err {
        rapport_core::CoreError::Validation(errors) => rapport_core::CoreError::Validation(
            errors
                .into_iter()
                .map(|mut e| {
                    if e.field == "windowSeconds" {
                        e.field = "minutes".into();
                        e.message = "the period is 1 to 1440 minutes".into();
                    }
                    e
                })
                .collect(),
        ),
        other => other,
    }
}

/// The tenant's alert secret (made on first use).
#[server(endpoint = "alert_secret")]
pub async fn alert_secret() -> Result<String, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .alert_secret(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Issues a new alert secret; the previous one signs beside it for 24 hours.
/// Without JavaScript the page comes back showing the new secret.
#[server(endpoint = "rotate_alert_secret")]
pub async fn rotate_alert_secret() -> Result<String, ServerFnError> {
    use crate::ssr::{actor, is_plain_form_post, to_server_error};
    let (ctx, user) = admin().await?;
    let secret = ctx
        .services
        .rotate_alert_secret(&user.tenant_id, None, &actor(&user))
        .await
        .map_err(to_server_error)?;
    if is_plain_form_post() {
        leptos_axum::redirect(&format!("{}?secret=show", super::watchdogs::WATCHDOGS_PATH));
    }
    Ok(secret)
}

/// Lets a disabled receiver URL get alerts again.
#[server(endpoint = "enable_alert_receiver")]
pub async fn enable_alert_receiver(url: String) -> Result<(), ServerFnError> {
    use crate::ssr::{actor, to_server_error};
    let (ctx, user) = admin().await?;
    ctx.services
        .enable_alert_receiver(&user.tenant_id, &url, &actor(&user))
        .await
        .map_err(to_server_error)
}
