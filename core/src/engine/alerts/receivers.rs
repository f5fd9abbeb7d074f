//! Webhook receivers of alerts, and the secret that signs what they get.
//!
//! A `WEBHOOK` receiver (of a watchdog or an SLA rule) is a URL, not a
//! subscription. Its alerts still go through the webhook engine, so that they
//! are signed, retried on the same schedule, held by the endpoint's circuit,
//! refused by the SSRF guard and written to the delivery log: each receiver URL
//! of a tenant gets an internal row of `webhook_endpoints` (`receiver = true`),
//! made when it first gets an alert. The subscriptions API does not list or
//! change such rows, and domain events are never queued to them.
//!
//! All of a tenant's receiver rows sign with one secret, the tenant's **alert
//! secret** (`alert_secrets`, `whsec_…`, made on first use): an integrator
//! reads it once on the Watchdogs page and verifies every alert with it, the
//! way a subscription's deliveries are verified with the subscription's secret.
//! Rotating it keeps the previous one signing beside it for an overlap, as for
//! subscriptions.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::Tx,
    error::{CoreError, CoreResult},
    ids::TenantId,
    sealing::{Purpose, Sealer},
    time::{from_ms, now_ms},
    validate::Checks,
    webhooks::new_secret,
    with_db, with_tx, Services,
};

/// The tenant's alert secret in `tx`, made now if it has none: `(secret,
/// previous secret, until when the previous one signs)`, as stored (sealed when
/// the operator set a key).
async fn secret_in(
    tx: &mut Tx,
    sealer: &Sealer,
    tenant_id: &TenantId,
) -> CoreResult<(String, Option<String>, Option<i64>)> {
    with_tx!(tx, |conn| sqlx::query(
        "insert into alert_secrets (tenant_id, secret, updated_at) values ($1, $2, $3) \
         on conflict (tenant_id) do nothing"
    )
    .bind(tenant_id)
    .bind(sealer.seal(Purpose::SigningSecret, &new_secret()))
    .bind(now_ms())
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    let row: (String, Option<String>, Option<i64>) = with_tx!(tx, |conn| sqlx::query_as(
        "select secret, previous_secret, previous_secret_until from alert_secrets where tenant_id = $1"
    )
    .bind(tenant_id)
    .fetch_one(conn)
    .await)?;
    Ok(row)
}

/// The endpoint row that delivers alerts to `url` for the tenant, made now if
/// there is none. `None` when it is disabled (it answered `410 Gone`, or failed
/// for too long): it gets no alerts until an admin enables it again.
pub(super) async fn endpoint_for(
    tx: &mut Tx,
    sealer: &Sealer,
    tenant_id: &TenantId,
    url: &str,
) -> CoreResult<Option<String>> {
    let found: Option<(String, bool)> = with_tx!(tx, |conn| sqlx::query_as(
        "select id, enabled from webhook_endpoints where tenant_id = $1 and receiver and url = $2"
    )
    .bind(tenant_id)
    .bind(url)
    .fetch_optional(conn)
    .await)?;
    if let Some((id, enabled)) = found {
        return Ok(enabled.then_some(id));
    }
    let (secret, previous, until) = secret_in(tx, sealer, tenant_id).await?;
    let id = uuid::Uuid::now_v7().to_string();
    let now = now_ms();
    with_tx!(tx, |conn| sqlx::query(
        "insert into webhook_endpoints (id, tenant_id, url, description, event_types, enabled, secret, \
         previous_secret, previous_secret_until, receiver, created_at, updated_at) \
         values ($1, $2, $3, 'Alert receiver', '[]', true, $4, $5, $6, true, $7, $7)"
    )
    .bind(&id)
    .bind(tenant_id)
    .bind(url)
    .bind(&secret)
    .bind(&previous)
    .bind(until)
    .bind(now)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(Some(id))
}

/// A webhook receiver URL as the Watchdogs page shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertReceiverState {
    /// The URL.
    pub url: String,
    /// False once it answered `410 Gone` or failed for too long.
    pub enabled: bool,
    /// Why Rapport disabled it.
    pub disabled_reason: Option<String>,
    /// Since when every attempt has failed.
    pub failing_since: Option<chrono::DateTime<chrono::Utc>>,
}

impl Services {
    /// The tenant's alert secret (made now if it has none): every alert to a
    /// webhook receiver is signed with it.
    pub async fn alert_secret(&self, tenant_id: &TenantId) -> CoreResult<String> {
        let mut tx = self.db().begin().await?;
        let (secret, _, _) = secret_in(&mut tx, self.sealer(), tenant_id).await?;
        tx.commit().await?;
        self.sealer().open(Purpose::SigningSecret, &secret)
    }

    /// Issues a new alert secret; the previous one keeps signing beside it for
    /// `overlap_seconds` (0 to 604,800; default 86,400). Returns the new one.
    pub async fn rotate_alert_secret(
        &self,
        tenant_id: &TenantId,
        overlap_seconds: Option<i64>,
        actor: &Actor,
    ) -> CoreResult<String> {
        let overlap = overlap_seconds.unwrap_or(86_400);
        let mut checks = Checks::new();
        checks.in_range("overlapSeconds", overlap, 0..=604_800);
        checks.finish()?;
        let secret = new_secret();
        let sealed = self.sealer().seal(Purpose::SigningSecret, &secret);
        let now = now_ms();
        let until = now + overlap * 1000;
        let mut tx = self.db().begin().await?;
        secret_in(&mut tx, self.sealer(), tenant_id).await?;
        // The secret and its copies on the receiver rows change together.
        for sql in [
            "update alert_secrets set previous_secret = secret, previous_secret_until = $3, secret = $2, \
             updated_at = $4 where tenant_id = $1",
            "update webhook_endpoints set previous_secret = secret, previous_secret_until = $3, secret = $2, \
             updated_at = $4 where tenant_id = $1 and receiver",
        ] {
            with_tx!(&mut tx, |conn| sqlx::query(sql)
                .bind(tenant_id)
                .bind(&sealed)
                .bind(until)
                .bind(now)
                .execute(conn)
                .await
                .map(|r| r.rows_affected()))?;
        }
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "alertsecret.rotate",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        Ok(secret)
    }

    /// The webhook receiver URLs that have had alerts, with their state.
    pub async fn alert_receivers(&self, tenant_id: &TenantId) -> CoreResult<Vec<AlertReceiverState>> {
        let rows: Vec<(String, bool, Option<String>, Option<i64>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select url, enabled, disabled_reason, failing_since from webhook_endpoints \
             where tenant_id = $1 and receiver order by url"
        )
        .bind(tenant_id)
        .fetch_all(pool)
        .await)?;
        Ok(rows
            .into_iter()
            .map(|(url, enabled, disabled_reason, failing_since)| AlertReceiverState {
                url,
                enabled,
                disabled_reason,
                failing_since: failing_since.map(from_ms),
            })
            .collect())
    }

    /// Lets a disabled receiver URL get alerts again, tried at once.
    pub async fn enable_alert_receiver(&self, tenant_id: &TenantId, url: &str, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let id: Option<String> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
            "update webhook_endpoints set enabled = true, disabled_reason = null, failing_since = null, \
             failures = 0, next_attempt_at = 0, updated_at = $3 where tenant_id = $1 and receiver and url = $2 \
             returning id"
        )
        .bind(tenant_id)
        .bind(url)
        .bind(now_ms())
        .fetch_optional(conn)
        .await)?;
        let id = id.ok_or(CoreError::NotFound("alert receiver"))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "alertreceiver.enable",
            "webhook",
            Some(&id),
        )
        .await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(())
    }
}
