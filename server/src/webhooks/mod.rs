//! The webhook delivery worker.
//!
//! One loop claims due deliveries from the outbox (see
//! `rapport_core::webhooks::deliveries`) as long as it has free slots, each claimed
//! delivery is sent by its own task, and one recorder task writes finished attempts
//! back in batches. Committing a change that queues events wakes the loop at once;
//! otherwise it polls every second (other instances' events, due retries).
//!
//! Each request is a POST of the event's stored bytes, signed per Standard Webhooks
//! v1 with the `standardwebhooks` crate:
//!
//! | Header | Value |
//! |---|---|
//! | `webhook-id` | the event id (`msg_…`), the same on every retry and replay |
//! | `webhook-timestamp` | unix seconds of this attempt |
//! | `webhook-signature` | `v1,<base64>`; two, space-separated, while a rotated secret overlaps |
//! | `rapport-event-type` | e.g. `conversation.created` |
//! | `rapport-delivery-id` | this endpoint's delivery of the event (`dlv_…`) |
//! | `rapport-actor` | who caused the event: `user:<id>`, `apikey:<id>`, `customer:<id>`, `system:<what>` |
//! | `rapport-attempt` | 1 for the first attempt of a schedule |
//!
//! 2xx is success. 410 disables the endpoint. Anything else (3xx included: redirects
//! are not followed), a timeout (15 s) or a refused address is a failure, retried per
//! the schedule; a `Retry-After` longer than the scheduled wait is honoured.

pub mod guard;

use std::{sync::Arc, time::Duration};

use rapport_core::{
    db::Backend,
    webhooks::deliveries::{AttemptResult, ClaimedDelivery, Outcome, RetryPolicy},
    Services,
};
use tokio::sync::{mpsc, watch, Semaphore};

/// How long an attempt may take before it counts as failed.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// How often the worker looks for due retries and other instances' events.
const POLL: Duration = Duration::from_secs(1);
/// Most deliveries claimed in one query.
const CLAIM_BATCH: usize = 128;
/// How much of a response body the log keeps.
const EXCERPT_BYTES: usize = 1024;

/// What the worker needs to know.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Retry schedule and endpoint disabling.
    pub policy: RetryPolicy,
    /// Turns the SSRF guard off.
    pub allow_private_networks: bool,
    /// Deliveries in flight at once.
    pub concurrency: usize,
    /// How long a claim lasts; past it (the instance died) another worker may retry.
    pub lease: Duration,
}

/// Starts the worker. It stops claiming when `shutdown` turns true, lets attempts in
/// flight finish (up to the timeout), records them, and ends.
pub fn spawn(
    services: Services,
    settings: WorkerSettings,
    shutdown: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run(services, settings, shutdown))
}

/// The HTTP client deliveries go through: no redirects, no proxy, 15 s, guarded DNS.
pub fn client(allow_private_networks: bool) -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .timeout(TIMEOUT)
        .connect_timeout(Duration::from_secs(5))
        .pool_max_idle_per_host(64)
        .user_agent(concat!("Rapport-Webhooks/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(guard::GuardedResolver::new(allow_private_networks))
        .build()
        .expect("the webhook HTTP client builds")
}

async fn run(services: Services, settings: WorkerSettings, mut shutdown: watch::Receiver<bool>) {
    if services.db().backend() == Backend::Sqlite {
        // SQLite has one instance, so claims still held were held by a process that
        // is gone; give them back at once instead of waiting for their leases.
        match services.release_claims().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(deliveries = n, "released deliveries claimed before a restart"),
            Err(e) => tracing::error!(error = %e, "cannot release earlier claims"),
        }
    }
    let client = client(settings.allow_private_networks);
    let concurrency = settings.concurrency.max(1);
    let slots = Arc::new(Semaphore::new(concurrency));
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let recorder = tokio::spawn(record(services.clone(), done_rx, settings.policy.clone()));
    let signal = services.outbox_signal().clone();

    while !*shutdown.borrow() {
        let free = slots.available_permits().min(CLAIM_BATCH);
        let claimed = if free == 0 {
            Vec::new()
        } else {
            match services.claim_deliveries(free as i64, settings.lease).await {
                Ok(c) => c,
                Err(e) => {
                    tracing::error!(error = %e, "cannot claim webhook deliveries");
                    Vec::new()
                }
            }
        };
        let full_batch = claimed.len() == free && free > 0;
        for delivery in claimed {
            let permit = slots
                .clone()
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let client = client.clone();
            let allow_private = settings.allow_private_networks;
            let done = done_tx.clone();
            tokio::spawn(async move {
                let result = attempt(&client, allow_private, delivery).await;
                let _ = done.send(result);
                drop(permit);
            });
        }
        if full_batch {
            // More may be due right away.
            continue;
        }
        tokio::select! {
            _ = signal.notified() => {}
            _ = tokio::time::sleep(POLL) => {}
            _ = shutdown.changed() => {}
            // A slot came free while every slot was busy.
            _ = slots.acquire(), if free == 0 => {}
        }
    }
    // Let attempts in flight finish, then flush the recorder.
    let _ = tokio::time::timeout(TIMEOUT + Duration::from_secs(1), slots.acquire_many(concurrency as u32)).await;
    drop(done_tx);
    let _ = recorder.await;
}

/// Writes finished attempts back, as many per transaction as have finished.
async fn record(services: Services, mut done: mpsc::UnboundedReceiver<AttemptResult>, policy: RetryPolicy) {
    let mut batch = Vec::new();
    while done.recv_many(&mut batch, 512).await > 0 {
        match services.record_attempts(&batch, &policy).await {
            Ok(disabled) => {
                for endpoint in disabled {
                    tracing::warn!(endpoint, "webhook endpoint disabled");
                }
            }
            // The claims stay leased; once the lease ends they are attempted again.
            Err(e) => tracing::error!(error = %e, attempts = batch.len(), "cannot record webhook attempts"),
        }
        batch.clear();
        // A delivered event may unblock the next one of its customer.
        services.outbox_signal().notify_one();
    }
}

/// Makes one attempt and judges it.
pub async fn attempt(client: &reqwest::Client, allow_private: bool, d: ClaimedDelivery) -> AttemptResult {
    let started = std::time::Instant::now();
    let started_at = rapport_core::time::now_ms();
    let (status_code, error, response_excerpt, outcome) = match send(client, allow_private, &d).await {
        Ok((status, retry_after, excerpt)) => {
            let outcome = if status.is_success() {
                Outcome::Delivered
            } else if status == reqwest::StatusCode::GONE {
                Outcome::Gone
            } else {
                Outcome::Failed { retry_after }
            };
            (Some(status.as_u16()), None, Some(excerpt), outcome)
        }
        Err(error) => (None, Some(error), None, Outcome::Failed { retry_after: None }),
    };
    AttemptResult {
        seq: d.seq,
        delivery_id: d.id,
        tenant_id: d.tenant_id,
        endpoint_id: d.endpoint_id,
        attempt: d.attempt,
        started_at,
        duration_ms: i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX),
        status_code,
        error,
        response_excerpt,
        outcome,
    }
}

/// Signs and POSTs; returns the status, any `Retry-After`, and the body's start.
async fn send(
    client: &reqwest::Client,
    allow_private: bool,
    d: &ClaimedDelivery,
) -> Result<(reqwest::StatusCode, Option<Duration>, String), String> {
    let url = reqwest::Url::parse(&d.url).map_err(|e| format!("invalid URL: {e}"))?;
    if !allow_private {
        let literal = match url.host() {
            Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal.filter(|ip| !guard::is_public(*ip)) {
            return Err(format!(
                "refused: {ip} is not a public address (set RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS to allow)"
            ));
        }
    }
    let timestamp = chrono::Utc::now().timestamp();
    let mut signatures = Vec::with_capacity(d.secrets.len());
    for secret in &d.secrets {
        let signer = standardwebhooks::Webhook::new(secret).map_err(|e| format!("unusable secret: {e}"))?;
        signatures.push(
            signer
                .sign(&d.event_id, timestamp, d.payload.as_bytes())
                .map_err(|e| format!("cannot sign: {e}"))?,
        );
    }
    let response = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(standardwebhooks::HEADER_WEBHOOK_ID, &d.event_id)
        .header(standardwebhooks::HEADER_WEBHOOK_TIMESTAMP, timestamp.to_string())
        .header(standardwebhooks::HEADER_WEBHOOK_SIGNATURE, signatures.join(" "))
        .header("rapport-event-type", &d.event_type)
        .header("rapport-delivery-id", &d.id)
        .header("rapport-actor", &d.actor)
        .header("rapport-attempt", d.attempt.to_string())
        .body(d.payload.clone())
        .send()
        .await
        .map_err(describe)?;
    let status = response.status();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    let mut excerpt = Vec::new();
    let mut response = response;
    while let Ok(Some(chunk)) = response.chunk().await {
        excerpt.extend_from_slice(&chunk[..chunk.len().min(EXCERPT_BYTES - excerpt.len())]);
        if excerpt.len() >= EXCERPT_BYTES {
            break;
        }
    }
    Ok((status, retry_after, String::from_utf8_lossy(&excerpt).into_owned()))
}

/// A readable cause for a failed request, including the SSRF guard's refusal.
fn describe(e: reqwest::Error) -> String {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(err) = source {
        if let Some(refused) = err.downcast_ref::<guard::Refused>() {
            return refused.to_string();
        }
        source = err.source();
    }
    if e.is_timeout() {
        format!("timed out after {} s", TIMEOUT.as_secs())
    } else if e.is_connect() {
        format!("cannot connect: {}", root_cause(&e))
    } else {
        root_cause(&e)
    }
}

fn root_cause(e: &dyn std::error::Error) -> String {
    let mut cause = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    cause
}

/// `Retry-After` as seconds or an HTTP date.
fn parse_retry_after(value: &str) -> Option<Duration> {
    if let Ok(secs) = value.trim().parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = chrono::DateTime::parse_from_rfc2822(value.trim()).ok()?;
    let wait = at.signed_duration_since(chrono::Utc::now()).to_std().ok()?;
    Some(wait)
}

#[cfg(test)]
mod tests {
    use super::parse_retry_after;
    use std::time::Duration;

    #[test]
    fn retry_after_in_both_forms() {
        assert_eq!(parse_retry_after("120"), Some(Duration::from_secs(120)));
        let later = (chrono::Utc::now() + chrono::Duration::seconds(600)).to_rfc2822();
        let wait = parse_retry_after(&later).unwrap();
        assert!(wait > Duration::from_secs(590) && wait <= Duration::from_secs(600));
        assert_eq!(parse_retry_after("soon"), None);
    }
}
