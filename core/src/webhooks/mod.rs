//! Webhook subscriptions (spec 6): where a tenant's events go, which ones, and the
//! secret they are signed with. Delivery state lives in [`deliveries`].
//!
//! The signing secret is `whsec_` and 32 random bytes in base64 (Standard Webhooks).
//! It is shown once, when created or rotated. Unlike API keys it cannot be stored
//! as a digest: signing needs the key itself. Rotation keeps the previous secret
//! for an overlap (24 hours by default), during which every delivery carries both
//! signatures, so receivers can switch without losing a message.
//!
//! Rows marked `receiver` are not subscriptions: they carry alerts to the
//! `WEBHOOK` receivers of watchdogs and SLA rules (`engine::alerts`), and this
//! API neither lists nor changes them.

pub mod deliveries;

use base64::{engine::general_purpose::STANDARD, Engine};
use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::TenantTable,
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{TenantId, WebhookId},
    model::{Page, PageRequest},
    sealing::Purpose,
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_tx, Services,
};

/// A webhook subscription, as listed (never with its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookEndpoint {
    /// Unique id.
    #[schema(value_type = String)]
    pub id: WebhookId,
    /// Where deliveries are POSTed.
    pub url: String,
    /// A note for admins.
    pub description: Option<String>,
    /// Event types delivered; empty means every event.
    #[schema(value_type = Vec<crate::events::SubscribableEventType>)]
    pub event_types: Vec<EventType>,
    /// Disabled endpoints receive nothing: events that happen meanwhile are not queued
    /// for them, and deliveries queued before wait until the endpoint is enabled.
    pub enabled: bool,
    /// Why Rapport disabled the endpoint (410 Gone, failing too long), if it did.
    pub disabled_reason: Option<String>,
    /// Since when every attempt has failed; null while it works.
    pub failing_since: Option<chrono::DateTime<chrono::Utc>>,
    /// While it fails: no attempt before this time. A failing endpoint is held as a
    /// whole (its queued deliveries wait, untouched) until its next retry; then one
    /// delivery probes it. Null when it may be tried now. Events that happen while
    /// it fails are not queued for it at once: they are queued, in order, once a
    /// probe succeeds (or, for its probes, a batch at a time as its hold ends), so
    /// its delivery log lists them from then on.
    pub held_until: Option<chrono::DateTime<chrono::Utc>>,
    /// Until when the previous secret still signs, after a rotation.
    pub previous_secret_expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// A subscription together with its secret: the answer to create and rotate, the
/// only times the secret is shown.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebhookWithSecret {
    /// The subscription.
    #[serde(flatten)]
    pub endpoint: WebhookEndpoint,
    /// The signing secret (`whsec_…`). Store it now; it is not shown again.
    pub secret: String,
}

/// Input to create or update a subscription.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"url": "https://crm.example.com/hooks/rapport", "eventTypes": ["conversation.created", "message.received"], "description": "CRM sync"}))]
pub struct WebhookIn {
    /// Required: an absolute http(s) URL.
    #[schema(required = true, nullable = false, format = "uri", min_length = 1, max_length = 2048)]
    pub url: Option<String>,
    /// A note for admins (at most 500 characters).
    #[schema(max_length = 500)]
    pub description: Option<String>,
    /// Event types to deliver (unique); omitted or empty means every event.
    #[schema(value_type = Option<Vec<crate::events::SubscribableEventType>>)]
    pub event_types: Option<Vec<String>>,
    /// Default true. Enabling clears the reason Rapport disabled it.
    pub enabled: Option<bool>,
}

/// Input to rotate a secret.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RotateSecretIn {
    /// How long the previous secret keeps signing, in seconds: 0 to 604800 (7 days).
    /// Default 86400 (24 hours).
    #[schema(minimum = 0, maximum = 604800)]
    pub overlap_seconds: Option<i64>,
}

/// A new signing secret.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("whsec_{}", STANDARD.encode(bytes))
}

#[derive(sqlx::FromRow)]
struct EndpointRow {
    id: WebhookId,
    url: String,
    description: Option<String>,
    event_types: String,
    enabled: bool,
    disabled_reason: Option<String>,
    failing_since: Option<i64>,
    next_attempt_at: i64,
    previous_secret_until: Option<i64>,
    created_at: i64,
    updated_at: i64,
}

impl From<EndpointRow> for WebhookEndpoint {
    fn from(r: EndpointRow) -> Self {
        let names: Vec<String> = serde_json::from_str(&r.event_types).unwrap_or_default();
        WebhookEndpoint {
            id: r.id,
            url: r.url,
            description: r.description,
            event_types: names.iter().filter_map(|n| EventType::parse(n)).collect(),
            enabled: r.enabled,
            disabled_reason: r.disabled_reason,
            failing_since: r.failing_since.map(from_ms),
            held_until: (r.next_attempt_at > now_ms()).then(|| from_ms(r.next_attempt_at)),
            previous_secret_expires_at: r.previous_secret_until.filter(|t| *t > now_ms()).map(from_ms),
            created_at: from_ms(r.created_at),
            updated_at: from_ms(r.updated_at),
        }
    }
}

const COLUMNS: &str = "id, url, description, event_types, enabled, disabled_reason, failing_since, \
     next_attempt_at, previous_secret_until, created_at, updated_at";

/// The tenant's subscriptions: its endpoints other than the `receiver` rows that
/// carry watchdog and SLA alerts.
const SUBSCRIPTIONS: TenantTable = TenantTable {
    table: "webhook_endpoints",
    columns: COLUMNS,
    what: "webhook",
    narrow: " and not receiver",
};

struct ValidWebhook {
    url: String,
    description: Option<String>,
    event_types: String,
    enabled: bool,
}

fn validate(input: &WebhookIn) -> CoreResult<ValidWebhook> {
    let mut checks = Checks::new();
    let url = checks.required_text("url", input.url.as_deref(), 2048);
    if !url.is_empty() {
        checks.http_url("url", &url);
    }
    let description = checks.optional_text("description", input.description.as_deref(), 500);
    let names = input.event_types.clone().unwrap_or_default();
    checks.unique_items("eventTypes", &names, EventType::ALL.len(), |checks, at, name| {
        if EventType::parse(name).is_none_or(|t| !t.is_subscribable()) {
            checks.push(
                at,
                "unknown_event_type",
                format!("unknown event type {name}; see GET /rest/v1/webhook/eventtypes"),
            );
        }
    });
    checks.finish()?;
    Ok(ValidWebhook {
        url,
        description,
        event_types: serde_json::to_string(&names).unwrap_or_else(|_| "[]".into()),
        enabled: input.enabled.unwrap_or(true),
    })
}

impl Services {
    /// Creates a subscription; the answer carries its secret, once.
    pub async fn create_webhook(
        &self,
        tenant_id: &TenantId,
        input: WebhookIn,
        actor: &Actor,
    ) -> CoreResult<WebhookWithSecret> {
        let valid = validate(&input)?;
        let id = WebhookId::new(uuid::Uuid::now_v7().to_string());
        let secret = new_secret();
        let sealed = self.sealer().seal(Purpose::SigningSecret, &secret);
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into webhook_endpoints (id, tenant_id, url, description, event_types, enabled, secret, \
             created_at, updated_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $8)"
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(&valid.url)
        .bind(&valid.description)
        .bind(&valid.event_types)
        .bind(valid.enabled)
        .bind(&sealed)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(&mut tx, Some(tenant_id), actor, "webhook.create", "webhook", Some(&id)).await?;
        tx.commit().await?;
        Ok(WebhookWithSecret {
            endpoint: self.get_webhook(tenant_id, &id).await?,
            secret,
        })
    }

    /// One subscription.
    pub async fn get_webhook(&self, tenant_id: &TenantId, id: &WebhookId) -> CoreResult<WebhookEndpoint> {
        let row: EndpointRow = SUBSCRIPTIONS.get(self.db(), tenant_id, id).await?;
        Ok(WebhookEndpoint::from(row))
    }

    /// A page of subscriptions, oldest first.
    pub async fn list_webhooks(&self, tenant_id: &TenantId, page: &PageRequest) -> CoreResult<Page<WebhookEndpoint>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<EndpointRow>) = SUBSCRIPTIONS
            .page(self.db(), tenant_id, "created_at, id", &paging)
            .await?;
        Ok(paging.page(total, rows.into_iter().map(WebhookEndpoint::from).collect()))
    }

    /// Replaces a subscription's URL, description, filter and enabled flag. Enabling
    /// clears `disabledReason` and `failingSince`; deliveries queued before it was
    /// disabled then go out. Enabling it or changing its URL ends the endpoint's hold
    /// (see [`deliveries::Circuit`]): the next attempt goes out at once.
    pub async fn update_webhook(
        &self,
        tenant_id: &TenantId,
        id: &WebhookId,
        input: WebhookIn,
        actor: &Actor,
    ) -> CoreResult<WebhookEndpoint> {
        let valid = validate(&input)?;
        let mut tx = self.db().begin().await?;
        // An endpoint behind in the event stream skips the events of the time
        // it is disabled: disabling opens a gap, enabling closes it (see
        // `deliveries::catch_up`). Each does nothing unless the switch flips.
        if valid.enabled {
            deliveries::close_gap(&mut tx, self.db().backend(), tenant_id, id).await?;
        } else {
            deliveries::open_gap(&mut tx, self.db().backend(), tenant_id, id).await?;
        }
        let sql = "update webhook_endpoints set url = $3, description = $4, event_types = $5, enabled = $6, \
             disabled_reason = case when $6 then null else disabled_reason end, \
             failing_since = case when $6 and not enabled then null else failing_since end, \
             failures = case when $6 and not enabled then 0 else failures end, \
             next_attempt_at = case when $6 and (not enabled or url <> $3) then 0 else next_attempt_at end, \
             updated_at = $7 where tenant_id = $1 and id = $2 and not receiver";
        let changed = with_tx!(&mut tx, |conn| sqlx::query(sql)
            .bind(tenant_id)
            .bind(id)
            .bind(&valid.url)
            .bind(&valid.description)
            .bind(&valid.event_types)
            .bind(valid.enabled)
            .bind(now_ms())
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        if changed == 0 {
            return Err(CoreError::NotFound("webhook"));
        }
        audit::record(&mut tx, Some(tenant_id), actor, "webhook.update", "webhook", Some(id)).await?;
        tx.commit().await?;
        self.wake_outbox();
        self.get_webhook(tenant_id, id).await
    }

    /// Deletes a subscription with its queue and log.
    pub async fn delete_webhook(&self, tenant_id: &TenantId, id: &WebhookId, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        // Attempts reference deliveries, deliveries reference the endpoint; both cascade.
        let deleted = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from webhook_endpoints where tenant_id = $1 and id = $2 and not receiver"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if deleted == 0 {
            return Err(CoreError::NotFound("webhook"));
        }
        audit::record(&mut tx, Some(tenant_id), actor, "webhook.delete", "webhook", Some(id)).await?;
        tx.commit().await
    }

    /// Issues a new secret. The previous one keeps signing (beside the new one) for
    /// the overlap.
    pub async fn rotate_webhook_secret(
        &self,
        tenant_id: &TenantId,
        id: &WebhookId,
        input: RotateSecretIn,
        actor: &Actor,
    ) -> CoreResult<WebhookWithSecret> {
        let overlap = input.overlap_seconds.unwrap_or(86_400);
        let mut checks = Checks::new();
        checks.in_range("overlapSeconds", overlap, 0..=604_800);
        checks.finish()?;
        let secret = new_secret();
        let sealed = self.sealer().seal(Purpose::SigningSecret, &secret);
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let changed = with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set previous_secret = secret, previous_secret_until = $4, secret = $3, \
             updated_at = $5 where tenant_id = $1 and id = $2 and not receiver"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(&sealed)
        .bind(now + overlap * 1000)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if changed == 0 {
            return Err(CoreError::NotFound("webhook"));
        }
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "webhook.rotate_secret",
            "webhook",
            Some(id),
        )
        .await?;
        tx.commit().await?;
        Ok(WebhookWithSecret {
            endpoint: self.get_webhook(tenant_id, id).await?,
            secret,
        })
    }

    /// Queues a `webhook.test` event to this endpoint only, whatever its filter.
    /// Returns the event id (its `webhook-id`).
    pub async fn send_test_event(&self, tenant_id: &TenantId, id: &WebhookId, actor: &Actor) -> CoreResult<String> {
        self.get_webhook(tenant_id, id).await?;
        let body = serde_json::json!({
            "message": "Test event from Rapport: this endpoint receives signed deliveries.",
            "webhookId": id,
        })
        .to_string();
        let mut tx = self.db().begin().await?;
        let event_id = events::deliver_to(
            &mut tx,
            tenant_id,
            actor,
            EventType::WebhookTest,
            None,
            &body,
            &[id.to_string()],
        )
        .await?;
        audit::record(&mut tx, Some(tenant_id), actor, "webhook.test", "webhook", Some(id)).await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(event_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_follow_standard_webhooks() {
        let s = new_secret();
        let raw = STANDARD.decode(s.strip_prefix("whsec_").unwrap()).unwrap();
        assert_eq!(raw.len(), 32, "24 to 64 bytes per the spec");
        assert_ne!(new_secret(), s);
    }

    #[test]
    fn filters_name_known_events_once() {
        let err = |types: &[&str]| match validate(&WebhookIn {
            url: Some("https://example.com/h".into()),
            event_types: Some(types.iter().map(|s| s.to_string()).collect()),
            ..WebhookIn::default()
        }) {
            Ok(_) => vec![],
            Err(CoreError::Validation(e)) => e.into_iter().map(|e| e.code).collect(),
            Err(e) => panic!("{e}"),
        };
        assert!(err(&["message.received", "customer.deleted"]).is_empty());
        assert_eq!(err(&["message.received", "message.received"]), ["duplicate"]);
        assert_eq!(err(&["message.deleted"]), ["unknown_event_type"]);
    }
}
