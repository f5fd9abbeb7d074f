//! Webhook subscriptions from the dashboard (admins): the same services as
//! `/rest/v1/webhook`, with wasm-safe view types.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// A subscription as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookView {
    /// Id.
    pub id: String,
    /// Target URL.
    pub url: String,
    /// Admin note.
    pub description: Option<String>,
    /// Subscribed event types; empty means all.
    pub event_types: Vec<String>,
    /// Whether deliveries go out.
    pub enabled: bool,
    /// Why Rapport disabled it.
    pub disabled_reason: Option<String>,
    /// Since when every attempt failed, RFC 3339.
    pub failing_since: Option<String>,
    /// Until when the previous secret still signs, RFC 3339.
    pub previous_secret_expires_at: Option<String>,
}

/// A subscription with its secret, shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebhookSecretView {
    /// The subscription.
    pub webhook: WebhookView,
    /// `whsec_…`.
    pub secret: String,
}

/// One delivery attempt, for the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptView {
    /// Delivery id (for replay).
    pub delivery_id: String,
    /// Event id (`webhook-id`).
    pub event_id: String,
    /// Event type.
    pub event_type: String,
    /// Attempt number in its delivery's schedule (1 for the first try).
    pub attempt: i64,
    /// When, RFC 3339.
    pub at: String,
    /// HTTP status, if any.
    pub status_code: Option<i64>,
    /// Latency in ms.
    pub duration_ms: i64,
    /// Error, if no usable answer.
    pub error: Option<String>,
    /// Start of the answer.
    pub response_excerpt: Option<String>,
}

#[cfg(feature = "ssr")]
fn view(w: rapport_core::webhooks::WebhookEndpoint) -> WebhookView {
    WebhookView {
        id: w.id.into_string(),
        url: w.url,
        description: w.description,
        event_types: w.event_types.iter().map(|t| t.as_str().to_string()).collect(),
        enabled: w.enabled,
        disabled_reason: w.disabled_reason,
        failing_since: w.failing_since.map(|t| t.to_rfc3339()),
        previous_secret_expires_at: w.previous_secret_expires_at.map(|t| t.to_rfc3339()),
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// The event types a subscription can name.
#[server(endpoint = "webhook_event_types")]
pub async fn webhook_event_types() -> Result<Vec<(String, String)>, ServerFnError> {
    admin().await?;
    Ok(rapport_core::webhooks::deliveries::event_catalogue()
        .into_iter()
        .filter(|(t, _)| t.is_subscribable())
        .map(|(t, what)| (t.as_str().to_string(), what.to_string()))
        .collect())
}

/// The tenant's subscriptions.
#[server(endpoint = "list_webhooks")]
pub async fn list_webhooks() -> Result<Vec<WebhookView>, ServerFnError> {
    let (ctx, user) = admin().await?;
    let page = rapport_core::model::PageRequest {
        page_size: Some(rapport_core::model::PageRequest::MAX_PAGE_SIZE),
        ..Default::default()
    };
    Ok(ctx
        .services
        .list_webhooks(&user.tenant_id, &page)
        .await
        .map_err(crate::ssr::to_server_error)?
        .results
        .into_iter()
        .map(view)
        .collect())
}

/// Where subscriptions are managed; the no-JavaScript flash cookie is scoped to it.
pub const WEBHOOKS_PATH: &str = "/settings/webhooks";

#[cfg(feature = "ssr")]
fn non_empty(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

/// Subscribes an endpoint (to every event when `event_types` is omitted); the answer
/// carries the secret, once. Without JavaScript it travels to the page once in a
/// short-lived, HttpOnly cookie instead.
#[server(endpoint = "create_webhook")]
pub async fn create_webhook(
    url: String,
    description: Option<String>,
    event_types: Option<Vec<String>>,
) -> Result<WebhookSecretView, ServerFnError> {
    let (ctx, user) = admin().await?;
    let input = rapport_core::webhooks::WebhookIn {
        url: Some(url.trim().to_string()),
        description: non_empty(description),
        event_types,
        enabled: Some(true),
    };
    let created = ctx
        .services
        .create_webhook(&user.tenant_id, input, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    let answer = WebhookSecretView {
        webhook: view(created.endpoint),
        secret: created.secret,
    };
    crate::ssr::put_flash(&ctx, WEBHOOKS_PATH, &answer);
    Ok(answer)
}

/// Takes the secret shown once after a form post without JavaScript (a new
/// subscription, or a rotation of `id` when given), and clears it.
#[server(endpoint = "take_webhook_secret")]
pub async fn take_webhook_secret(id: Option<String>) -> Result<Option<WebhookSecretView>, ServerFnError> {
    let (ctx, _user) = admin().await?;
    Ok(crate::ssr::take_flash::<WebhookSecretView>(&ctx, WEBHOOKS_PATH)
        .filter(|s| id.as_deref().is_none_or(|id| s.webhook.id == id)))
}

/// One subscription.
#[server(endpoint = "get_webhook")]
pub async fn get_webhook(id: String) -> Result<WebhookView, ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .get_webhook(&user.tenant_id, &id)
        .await
        .map(view)
        .map_err(crate::ssr::to_server_error)
}

/// Changes a subscription. `enabled` is a checkbox: present means on.
#[server(endpoint = "update_webhook")]
pub async fn update_webhook(
    id: String,
    url: String,
    description: Option<String>,
    event_types: Option<Vec<String>>,
    enabled: Option<String>,
) -> Result<WebhookView, ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    let input = rapport_core::webhooks::WebhookIn {
        url: Some(url.trim().to_string()),
        description: non_empty(description),
        // No box ticked means every event, as when subscribing.
        event_types: Some(event_types.unwrap_or_default()),
        enabled: Some(enabled.is_some()),
    };
    ctx.services
        .update_webhook(&user.tenant_id, &id, input, &crate::ssr::actor(&user))
        .await
        .map(view)
        .map_err(crate::ssr::to_server_error)
}

/// Deletes a subscription, then shows the list.
#[server(endpoint = "delete_webhook")]
pub async fn delete_webhook(id: String) -> Result<(), ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_webhook(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(WEBHOOKS_PATH);
    Ok(())
}

/// Rotates the secret; the previous one signs too for `overlap_seconds`.
#[server(endpoint = "rotate_webhook_secret")]
pub async fn rotate_webhook_secret(
    id: String,
    overlap_seconds: Option<i64>,
) -> Result<WebhookSecretView, ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    let rotated = ctx
        .services
        .rotate_webhook_secret(
            &user.tenant_id,
            &id,
            rapport_core::webhooks::RotateSecretIn { overlap_seconds },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    let answer = WebhookSecretView {
        webhook: view(rotated.endpoint),
        secret: rotated.secret,
    };
    crate::ssr::put_flash(&ctx, WEBHOOKS_PATH, &answer);
    Ok(answer)
}

/// Sends a `webhook.test` event to the endpoint; returns its event id.
#[server(endpoint = "send_test_webhook")]
pub async fn send_test_webhook(id: String) -> Result<String, ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .send_test_event(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)
}

/// The latest attempts of a subscription, newest first.
#[server(endpoint = "webhook_attempts")]
pub async fn webhook_attempts(id: String) -> Result<Vec<AttemptView>, ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    let page = rapport_core::model::PageRequest {
        page_size: Some(100),
        ..Default::default()
    };
    Ok(ctx
        .services
        .list_attempts(&user.tenant_id, &id, &page)
        .await
        .map_err(crate::ssr::to_server_error)?
        .results
        .into_iter()
        .map(|a| AttemptView {
            delivery_id: a.delivery_id,
            event_id: a.event_id,
            event_type: a.event_type,
            attempt: a.attempt,
            at: a.at.to_rfc3339(),
            status_code: a.status_code,
            duration_ms: a.duration_ms,
            error: a.error,
            response_excerpt: a.response_excerpt,
        })
        .collect())
}

/// Sends a delivery again with its original `webhook-id`.
#[server(endpoint = "replay_webhook_delivery")]
pub async fn replay_webhook_delivery(id: String, delivery_id: String) -> Result<(), ServerFnError> {
    let id = rapport_core::ids::WebhookId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .replay_delivery(&user.tenant_id, &id, &delivery_id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)
}
