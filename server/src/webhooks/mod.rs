//! The webhook delivery worker.
//!
//! One loop claims due deliveries from the outbox (see
//! `rapport_core::webhooks::deliveries`) as long as it has free slots, each claimed
//! delivery is sent by its own task, and one recorder task writes finished attempts
//! back in batches. A failing endpoint is held as a whole by its circuit, and no
//! endpoint has more than an eighth of the slots, no tenant more than a quarter, so
//! one tenant's dead or slow receivers do not hold up another's deliveries. Committing a change that queues
//! events wakes the loop at once; otherwise it sleeps until the next retry is due
//! (on PostgreSQL at most a second, for other instances' events).
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

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use rapport_core::{
    db::Backend,
    webhooks::deliveries::{AttemptResult, Busy, ClaimLimits, ClaimedDelivery, Outcome, RetryPolicy},
    Services,
};
use tokio::sync::{mpsc, watch, Semaphore};

/// How long an attempt may take before it counts as failed.
pub const TIMEOUT: Duration = Duration::from_secs(15);
/// Longest sleep with nothing due on SQLite: every write of this instance that
/// queues work wakes the worker, so this only bounds surprises (another process
/// writing to the file).
const IDLE_SQLITE: Duration = Duration::from_secs(10);
/// Longest sleep with nothing due on PostgreSQL, where other instances' events
/// wake nobody here.
const IDLE_POSTGRES: Duration = Duration::from_secs(1);
/// Sleep after the database could not say what is due.
const POLL_ON_ERROR: Duration = Duration::from_secs(1);
/// How long the worker waits after a commit wakes it before it claims, so that
/// the commits of that moment are handled together (measured with `cargo xtask
/// bench writes`).
const GATHER: Duration = Duration::from_millis(10);
/// Shortest sleep before a due time, so a clock step never makes a busy loop.
const MIN_SLEEP_MS: i64 = 5;
/// Most deliveries claimed in one transaction.
const CLAIM_BATCH: usize = 128;
/// Most attempts recorded in one transaction: the writer is never held long.
const RECORD_BATCH: usize = 256;
/// How often a failed record is retried before the claims are left to their lease.
const RECORD_TRIES: u64 = 5;
/// How much of a response body the log keeps.
const EXCERPT_BYTES: usize = 1024;

/// What the worker needs to know.
#[derive(Debug, Clone)]
pub struct WorkerSettings {
    /// Retry schedule and endpoint disabling.
    pub policy: RetryPolicy,
    /// Non-public addresses deliveries may reach anyway (the SSRF guard).
    pub allow_private_networks: guard::AllowedNetworks,
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
pub fn client(allow_private_networks: guard::AllowedNetworks) -> reqwest::Client {
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
    // Other instances' events wake nobody here: on PostgreSQL, look for them often.
    let idle = match services.db().backend() {
        Backend::Sqlite => IDLE_SQLITE,
        Backend::Postgres => IDLE_POSTGRES,
    };
    let client = client(settings.allow_private_networks.clone());
    let concurrency = settings.concurrency.max(1);
    let limits = ClaimLimits {
        total: 0,
        per_endpoint: (concurrency / 8).max(1),
        per_tenant: (concurrency / 4).max(1),
        lease: settings.lease,
    };
    let slots = Arc::new(Semaphore::new(concurrency));
    let in_flight = InFlight::default();
    let (done_tx, done_rx) = mpsc::unbounded_channel();
    let recorder = tokio::spawn(record(
        services.clone(),
        done_rx,
        settings.policy.clone(),
        in_flight.clone(),
    ));
    let signal = services.outbox_signal().clone();

    while !*shutdown.borrow() {
        let free = slots.available_permits().min(CLAIM_BATCH);
        let claimed = if free == 0 {
            Vec::new()
        } else {
            let busy = in_flight.snapshot();
            let limits = ClaimLimits {
                total: free,
                ..limits.clone()
            };
            match services.claim_deliveries(&limits, &busy).await {
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
            in_flight.add(&delivery.endpoint_id, &delivery.tenant_id);
            let client = client.clone();
            let allowed = settings.allow_private_networks.clone();
            let done = done_tx.clone();
            tokio::spawn(async move {
                let result = attempt(&client, &allowed, delivery).await;
                let _ = done.send(result);
                drop(permit);
            });
        }
        if full_batch {
            // More may be due right away.
            continue;
        }
        // Nothing more can be claimed now. Sleep until the next retry, reopening
        // endpoint or lease end; a commit that queues events, a recorded attempt
        // (it may unblock its customer's next event) or a freed slot wakes us sooner.
        let wait = if free == 0 {
            idle
        } else {
            match services.next_delivery_due().await {
                Ok(Some(at)) => {
                    let ms = (at - rapport_core::time::now_ms()).max(MIN_SLEEP_MS);
                    idle.min(Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
                }
                Ok(None) => idle,
                Err(e) => {
                    tracing::error!(error = %e, "cannot read when webhook work is next due");
                    POLL_ON_ERROR
                }
            }
        };
        tokio::select! {
            // Commits come in streams: gathering a few milliseconds of them
            // makes one fan-out and one claim of many events instead of one
            // of each per commit, which on SQLite would queue for the one
            // writer with the writes themselves.
            _ = signal.notified() => tokio::time::sleep(GATHER).await,
            _ = tokio::time::sleep(wait) => {}
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

/// This worker's attempts per endpoint and per tenant, from the claim until their
/// record is written (until then the endpoint's circuit does not know how they
/// ended). An endpoint gets at most an eighth of the slots and a tenant a quarter,
/// so endpoints that hang until the timeout leave the rest to everyone else.
#[derive(Clone, Default)]
struct InFlight(Arc<Mutex<Busy>>);

impl InFlight {
    fn add(&self, endpoint: &str, tenant: &str) {
        let mut busy = self.lock();
        *busy.endpoints.entry(endpoint.to_string()).or_default() += 1;
        *busy.tenants.entry(tenant.to_string()).or_default() += 1;
    }

    fn remove(&self, endpoint: &str, tenant: &str) {
        let mut guard = self.lock();
        let busy = &mut *guard;
        for (map, key) in [(&mut busy.endpoints, endpoint), (&mut busy.tenants, tenant)] {
            if let Some(n) = map.get_mut(key) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
    }

    fn snapshot(&self) -> Busy {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Busy> {
        // A panic while holding it cannot leave the counts half-written.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Writes finished attempts back: whatever has finished while the previous write
/// ran goes in the next, so a batch is written as soon as the writer is free (an
/// attempt is recorded within milliseconds of its answer, and a crash re-sends
/// only what was really in flight). A failed write is retried; if it keeps
/// failing, the claims stay leased and are attempted again, as the same attempt,
/// once the lease ends.
async fn record(
    services: Services,
    mut done: mpsc::UnboundedReceiver<AttemptResult>,
    policy: RetryPolicy,
    in_flight: InFlight,
) {
    let mut batch = Vec::new();
    while done.recv_many(&mut batch, RECORD_BATCH).await > 0 {
        let mut tries = 0;
        loop {
            match services.record_attempts(&batch, &policy).await {
                Ok(disabled) => {
                    for endpoint in disabled {
                        tracing::warn!(endpoint = %endpoint, "webhook endpoint disabled");
                    }
                    break;
                }
                Err(e) if tries < RECORD_TRIES => {
                    tries += 1;
                    tracing::warn!(error = %e, attempts = batch.len(), "recording webhook attempts failed; retrying");
                    tokio::time::sleep(Duration::from_millis(100 * tries)).await;
                }
                Err(e) => {
                    tracing::error!(error = %e, attempts = batch.len(), "cannot record webhook attempts");
                    break;
                }
            }
        }
        for r in &batch {
            in_flight.remove(&r.endpoint_id, &r.tenant_id);
        }
        batch.clear();
        // A delivered event may unblock the next one of its customer, and an
        // endpoint below its share may take more.
        services.outbox_signal().notify_one();
    }
}

/// Makes one attempt and judges it.
pub async fn attempt(client: &reqwest::Client, allowed: &guard::AllowedNetworks, d: ClaimedDelivery) -> AttemptResult {
    let started = std::time::Instant::now();
    let started_at = rapport_core::time::now_ms();
    let (status_code, error, response_excerpt, outcome) = match send(client, allowed, &d).await {
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
    allowed: &guard::AllowedNetworks,
    d: &ClaimedDelivery,
) -> Result<(reqwest::StatusCode, Option<Duration>, String), String> {
    let url = reqwest::Url::parse(&d.url).map_err(|e| format!("invalid URL: {e}"))?;
    let literal = match url.host() {
        Some(url::Host::Ipv4(ip)) => Some(std::net::IpAddr::V4(ip)),
        Some(url::Host::Ipv6(ip)) => Some(std::net::IpAddr::V6(ip)),
        _ => None,
    };
    if let Some(ip) = literal.filter(|ip| !allowed.allows(*ip)) {
        return Err(format!(
            "refused: {ip} is not a public address (set RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS to allow)"
        ));
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
