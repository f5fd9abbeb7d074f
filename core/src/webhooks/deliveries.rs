//! The delivery queue: claiming due deliveries, recording attempts, the delivery
//! log and replay. The HTTP side (signing, sending, the SSRF guard) is the server's
//! worker; everything it decides is stored here, so it survives restarts.
//!
//! A delivery is `pending` until a worker claims it (`delivering`, with a lease),
//! then `succeeded`, `pending` again with a later `next_attempt_at`, or `failed`
//! once the retry schedule is used up. A claim takes only the oldest unfinished
//! delivery of each (endpoint, customer) pair, which is what keeps one customer's
//! events in order at each endpoint.
//!
//! The work does not grow with the backlog:
//! - each endpoint has a [`Circuit`]: a failure (an error answer, a timeout, a name
//!   that does not resolve, a refused connection or address) holds the whole
//!   endpoint until its next attempt time, and its queued deliveries are not
//!   touched meanwhile; once it reopens, one probe tells whether it works again;
//! - a claim reads due endpoints from an index over `webhook_endpoints`, least
//!   recently served first, and from each only the head of its queue
//!   ([`QUEUE_WINDOW`]), bounded per endpoint ([`ClaimLimits`]), so one tenant's
//!   backlog does not delay another's deliveries;
//! - attempts are recorded many to a short transaction ([`Services::record_attempts`]);
//! - [`Services::next_delivery_due`] tells the worker how long it may sleep.
//!
//! On PostgreSQL a claim locks the endpoint rows it serves with `FOR UPDATE SKIP
//! LOCKED`, so several instances never claim the same attempt; a lease that runs
//! out (its instance died) puts the delivery back in the queue as the same attempt.

use std::{
    collections::{BTreeMap, HashMap},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    backoff::Backoff,
    db::{placeholders, Backend},
    error::{CoreError, CoreResult},
    events::EventType,
    model::{Page, PageRequest},
    sealing::Purpose,
    time::{duration_ms, from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

/// When to retry and when to give up on an endpoint.
#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Waits before the 2nd, 3rd, … attempt; after the last, the delivery fails.
    pub schedule: Backoff,
    /// An endpoint whose every attempt has failed for this long is disabled.
    pub disable_after: Duration,
    /// Longest `Retry-After` honoured.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// Svix's schedule: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h
    /// (8 attempts over about 27.6 hours); endpoints failing for 5 days are disabled.
    fn default() -> Self {
        let s = Duration::from_secs;
        RetryPolicy {
            schedule: Backoff::new(vec![s(5), s(300), s(1800), s(7200), s(18_000), s(36_000), s(36_000)]),
            disable_after: s(5 * 86_400),
            max_retry_after: s(86_400),
        }
    }
}

/// A delivery a worker has claimed, with everything needed to send it.
#[derive(Debug, Clone)]
pub struct ClaimedDelivery {
    /// Queue position.
    pub seq: i64,
    /// Delivery id (`rapport-delivery-id`).
    pub id: String,
    /// Tenant.
    pub tenant_id: String,
    /// Endpoint.
    pub endpoint_id: String,
    /// Where to POST.
    pub url: String,
    /// Secrets to sign with: the current one, then the previous one during a rotation.
    pub secrets: Vec<String>,
    /// Event id (`webhook-id`).
    pub event_id: String,
    /// Event type (`rapport-event-type`).
    pub event_type: String,
    /// Who caused the event, `kind:id` (`rapport-actor`).
    pub actor: String,
    /// The exact body to send.
    pub payload: String,
    /// This attempt's number in the current schedule, from 1.
    pub attempt: i64,
}

/// How an attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// 2xx.
    Delivered,
    /// Any other answer or no answer; `retry_after` if the receiver asked for a pause.
    Failed {
        /// The receiver's `Retry-After`.
        retry_after: Option<Duration>,
    },
    /// 410 Gone: the receiver wants no more deliveries; the endpoint is disabled.
    Gone,
}

/// One finished attempt, to record.
#[derive(Debug, Clone)]
pub struct AttemptResult {
    /// The claimed delivery.
    pub seq: i64,
    /// Its id.
    pub delivery_id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its endpoint.
    pub endpoint_id: String,
    /// Attempt number in the schedule.
    pub attempt: i64,
    /// When the request started, unix ms.
    pub started_at: i64,
    /// How long until the answer (or the error), ms.
    pub duration_ms: i64,
    /// The HTTP status, if an answer came.
    pub status_code: Option<u16>,
    /// Why there was no usable answer (timeout, refused address, …).
    pub error: Option<String>,
    /// The start of the response body.
    pub response_excerpt: Option<String>,
    /// The verdict.
    pub outcome: Outcome,
}

/// A delivery, as the log lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    /// Delivery id.
    pub id: String,
    /// Event id, sent as `webhook-id`.
    pub event_id: String,
    /// Event type.
    #[schema(value_type = crate::events::EventType)]
    pub event_type: String,
    /// `pending`, `delivering`, `succeeded` or `failed`.
    pub state: String,
    /// Attempts made in the current schedule.
    pub attempts: i64,
    /// When the next attempt is due (pending only).
    pub next_attempt_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Status of the last answer.
    pub last_status: Option<i64>,
    /// Error of the last attempt.
    pub last_error: Option<String>,
    /// When the event was queued.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it succeeded or finally failed.
    pub completed_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// One attempt, as the log lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Attempt {
    /// Attempt id.
    pub id: String,
    /// The delivery.
    pub delivery_id: String,
    /// The event (`webhook-id`).
    pub event_id: String,
    /// The event type.
    #[schema(value_type = crate::events::EventType)]
    pub event_type: String,
    /// Attempt number in its schedule.
    pub attempt: i64,
    /// When it started.
    pub at: chrono::DateTime<chrono::Utc>,
    /// Time to answer, ms.
    pub duration_ms: i64,
    /// HTTP status, if any.
    pub status_code: Option<i64>,
    /// Why there was no usable answer.
    pub error: Option<String>,
    /// The first 1 KiB of the answer.
    pub response_excerpt: Option<String>,
}

#[derive(sqlx::FromRow)]
struct ClaimRow {
    seq: i64,
    id: String,
    tenant_id: String,
    endpoint_id: String,
    url: String,
    secret: String,
    previous_secret: Option<String>,
    previous_secret_until: Option<i64>,
    event_id: String,
    event_type: String,
    actor: String,
    payload: String,
    attempts: i64,
}

#[derive(sqlx::FromRow)]
struct DeliveryRow {
    id: String,
    event_id: String,
    event_type: String,
    state: String,
    attempts: i64,
    next_attempt_at: i64,
    last_status: Option<i64>,
    last_error: Option<String>,
    created_at: i64,
    completed_at: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct AttemptRow {
    id: String,
    delivery_id: String,
    event_id: String,
    event_type: String,
    attempt: i64,
    started_at: i64,
    duration_ms: i64,
    status_code: Option<i64>,
    error: Option<String>,
    response_excerpt: Option<String>,
}

impl RetryPolicy {
    /// How long the receiver asked to be left alone, within the honoured maximum.
    pub fn asked(&self, retry_after: Option<Duration>) -> Duration {
        retry_after.map(|a| a.min(self.max_retry_after)).unwrap_or_default()
    }

    /// How long an endpoint is held after its `failures`-th failed attempt in a
    /// row: the schedule's wait for that attempt, and its last wait once the
    /// schedule is spent (an endpoint keeps being probed until it is disabled).
    pub fn hold(&self, failures: i64) -> Duration {
        self.schedule
            .after(failures)
            .or_else(|| {
                self.schedule
                    .after(i64::try_from(self.schedule.attempts()).unwrap_or(i64::MAX) - 1)
            })
            .unwrap_or_default()
    }
}

/// The most deliveries of one endpoint a claim reads: the head of its queue. Rows
/// there that are not due, or that wait behind an older delivery of their
/// customer, are passed over; the rest of the queue is not read at all, so a claim
/// costs the same behind a backlog of any size.
pub const QUEUE_WINDOW: i64 = 256;

/// Attempts written per `insert` (10 parameters each, well within both backends'
/// limits).
pub const ATTEMPT_ROWS: usize = 200;

/// How much one claim may take.
#[derive(Debug, Clone)]
pub struct ClaimLimits {
    /// Deliveries in all.
    pub total: usize,
    /// Deliveries of one endpoint in flight at once, counting those the worker
    /// still has in flight: one slow endpoint cannot take every slot.
    pub per_endpoint: usize,
    /// Deliveries of one tenant in flight at once, probes included: a tenant's
    /// many hanging endpoints (names whose lookup times out, say) cannot either.
    pub per_tenant: usize,
    /// How long a claim lasts; past it another worker may retry.
    pub lease: Duration,
}

/// What a worker has in flight (claimed, not yet recorded), per endpoint and per
/// tenant id; a claim leaves room for it.
#[derive(Debug, Clone, Default)]
pub struct Busy {
    /// Deliveries in flight per endpoint id.
    pub endpoints: HashMap<String, usize>,
    /// Deliveries in flight per tenant id.
    pub tenants: HashMap<String, usize>,
}

/// An endpoint's circuit, stored on `webhook_endpoints`.
///
/// Closed (`failures` 0), every due delivery may go. A failed attempt opens it:
/// the endpoint is held as a whole until `next_attempt_at`, whatever its backlog,
/// by the retry schedule's wait for its `failures`-th failure in a row (or a longer
/// `Retry-After`). Once that passes it is half-open: one delivery is claimed as a
/// probe, and the endpoint is held while the probe is under way. A success closes
/// the circuit; a failure opens it again for the next wait. Attempts that were
/// already under way when the circuit opened do not count again (each failing
/// attempt of a burst would otherwise jump the schedule).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Circuit {
    /// Failed attempts since the last success; 0 while the endpoint works.
    pub failures: i64,
    /// No attempt before this, unix ms.
    pub next_attempt_at: i64,
    /// When the last counted failure was recorded, unix ms.
    pub last_failure_at: Option<i64>,
    /// When the first failed attempt since the last success started, unix ms.
    pub failing_since: Option<i64>,
}

impl Circuit {
    /// Moves the circuit by one attempt that started at `started_at` and whose
    /// outcome is recorded at `now`.
    pub fn record(&mut self, started_at: i64, outcome: &Outcome, policy: &RetryPolicy, now: i64) {
        match outcome {
            Outcome::Delivered => {
                *self = Circuit {
                    failures: 0,
                    next_attempt_at: self.next_attempt_at.min(now),
                    last_failure_at: None,
                    failing_since: None,
                };
            }
            Outcome::Failed { retry_after } => {
                self.failing_since = Some(self.failing_since.unwrap_or(started_at).min(started_at));
                let asked = duration_ms(policy.asked(*retry_after));
                let fresh = self.failures == 0 || self.last_failure_at.is_none_or(|at| started_at >= at);
                if fresh {
                    self.failures += 1;
                    self.last_failure_at = Some(now);
                    // Replaces the probe's hold: the wait starts now.
                    self.next_attempt_at = now + duration_ms(policy.hold(self.failures)).max(asked);
                } else {
                    self.next_attempt_at = self.next_attempt_at.max(now + asked);
                }
            }
            // The endpoint is disabled; its circuit no longer matters.
            Outcome::Gone => {}
        }
    }

    /// How long every attempt has failed, ms; `i64::MIN` while the endpoint works.
    pub fn failing_for(&self, now: i64) -> i64 {
        self.failing_since.map_or(i64::MIN, |since| now - since)
    }
}

#[derive(sqlx::FromRow)]
struct CircuitRow {
    id: String,
    tenant_id: String,
    failures: i64,
    next_attempt_at: i64,
    last_failure_at: Option<i64>,
    failing_since: Option<i64>,
}

impl CircuitRow {
    fn circuit(&self) -> Circuit {
        Circuit {
            failures: self.failures,
            next_attempt_at: self.next_attempt_at,
            last_failure_at: self.last_failure_at,
            failing_since: self.failing_since,
        }
    }
}

/// `($1, …, $cols), ($cols+1, …), …` for a multi-row `insert` of `rows` rows.
fn value_rows(rows: usize, cols: usize) -> String {
    (0..rows)
        .map(|row| format!("({})", placeholders(row * cols + 1, cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Claims whose lease ran out go back to the queue as the same attempt. `$1`: now.
const RELEASE_EXPIRED: &str = "update webhook_deliveries set state = 'pending', lease_until = null, \
     attempts = case when attempts > 0 then attempts - 1 else 0 end \
     where state = 'delivering' and lease_until <= $1";

/// Enabled endpoints that are not held and have a due delivery, least recently
/// served first. `$1`: now, `$2`: how many. Each endpoint's earliest due time is
/// the first entry of its queue in `webhook_deliveries_endpoint_due_idx`; asked as
/// an ordered `limit 1` (not an `exists`, which PostgreSQL may plan as a scan that
/// it hopes ends early) it is one index probe per endpoint, whatever the held
/// endpoints have queued.
const DUE_ENDPOINTS: &str = "select w.id, w.tenant_id, w.failures from webhook_endpoints w \
     where w.enabled and w.next_attempt_at <= $1 \
     and (select d.next_attempt_at from webhook_deliveries d where d.endpoint_id = w.id and d.state = 'pending' \
       order by d.next_attempt_at limit 1) <= $1 \
     order by w.next_attempt_at, w.id limit $2";

/// The deliveries one endpoint may send now, from the head of its queue: due, and
/// first of their customer. `$1`: endpoint, `$2`: now, `$3`: [`QUEUE_WINDOW`],
/// `$4`: how many.
const QUEUE_HEAD: &str = "select q.seq from (select seq, ordering_key, next_attempt_at, created_at \
       from webhook_deliveries where endpoint_id = $1 and state = 'pending' order by created_at, seq limit $3) q \
     where q.next_attempt_at <= $2 \
     and not exists (select 1 from webhook_deliveries e where e.endpoint_id = $1 \
       and e.ordering_key = q.ordering_key and e.seq < q.seq and e.state in ('pending', 'delivering')) \
     order by q.created_at, q.seq limit $4";

/// The next time something may become claimable, `$1` being now: a held endpoint
/// reopens, a retry of a working endpoint falls due, or a lease ends. One probe
/// of `webhook_deliveries_endpoint_due_idx` per enabled endpoint.
const NEXT_DUE: &str = "select \
     (select min(case when w.next_attempt_at > $1 then w.next_attempt_at \
        else (select d.next_attempt_at from webhook_deliveries d where d.endpoint_id = w.id \
          and d.state = 'pending' and d.next_attempt_at > $1 order by d.next_attempt_at limit 1) end) \
      from webhook_endpoints w where w.enabled \
      and (select d.next_attempt_at from webhook_deliveries d where d.endpoint_id = w.id and d.state = 'pending' \
        order by d.next_attempt_at limit 1) is not null), \
     (select lease_until from webhook_deliveries where state = 'delivering' and lease_until > $1 \
       order by lease_until limit 1)";

/// The statements that find due webhook work, each with sample parameters (all
/// integers; a text `$1` is an endpoint id): what a claim and the worker's sleep
/// read. Tests `EXPLAIN` them on both backends to check that each reads indexes
/// and never scans the queue.
pub fn work_finding_statements() -> Vec<(&'static str, Vec<WorkParam>)> {
    use WorkParam::{Int, Text};
    let now = now_ms();
    vec![
        (RELEASE_EXPIRED, vec![Int(now)]),
        (DUE_ENDPOINTS, vec![Int(now), Int(128)]),
        (
            QUEUE_HEAD,
            vec![Text(String::new()), Int(now), Int(QUEUE_WINDOW), Int(32)],
        ),
        (NEXT_DUE, vec![Int(now)]),
    ]
}

/// A parameter of a statement from [`work_finding_statements`].
#[derive(Debug, Clone)]
pub enum WorkParam {
    /// An integer (a time, a count).
    Int(i64),
    /// A text (an id).
    Text(String),
}

impl Services {
    /// Claims due deliveries for `limits.lease`; each claim counts as an attempt.
    ///
    /// Due endpoints are read from `webhook_endpoints` (an endpoint held by its
    /// circuit is skipped by the index, whatever its backlog), least recently served
    /// first, and each gives at most `limits.per_endpoint` deliveries in flight, or
    /// one probe while its circuit is half-open, and a tenant no more than
    /// `limits.per_tenant` (both counting `busy`, this worker's unrecorded ones). Within an endpoint only the head of its queue is read.
    /// On PostgreSQL the endpoint rows are locked with `SKIP LOCKED`, so two
    /// instances never serve one endpoint at once and never claim one attempt twice.
    pub async fn claim_deliveries(&self, limits: &ClaimLimits, busy: &Busy) -> CoreResult<Vec<ClaimedDelivery>> {
        if limits.total == 0 {
            return Ok(vec![]);
        }
        let now = now_ms();
        let lease_until = now + duration_ms(limits.lease);
        let lock = match self.db().backend() {
            Backend::Postgres => "for update of w skip locked",
            Backend::Sqlite => "",
        };
        let mut tx = self.db().begin().await?;
        // Claims whose lease ran out belong to an instance that died (or could not
        // record them): they go back to the queue, and the re-send counts as the
        // same attempt.
        with_tx!(&mut tx, |conn| sqlx::query(RELEASE_EXPIRED)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        let due_endpoints = format!("{DUE_ENDPOINTS} {lock}");
        let endpoints: Vec<(String, String, i64)> = with_tx!(&mut tx, |conn| sqlx::query_as(&due_endpoints)
            .bind(now)
            .bind(i64::try_from(limits.total).unwrap_or(i64::MAX))
            .fetch_all(conn)
            .await)?;
        let mut seqs: Vec<i64> = Vec::new();
        let mut served: Vec<String> = Vec::new();
        let mut probed: Vec<String> = Vec::new();
        let mut tenants: HashMap<String, usize> = busy.tenants.clone();
        for (endpoint, tenant, failures) in endpoints {
            let left = limits.total.saturating_sub(seqs.len());
            let room = if failures > 0 {
                // Half-open: one attempt tells whether the endpoint works again.
                1
            } else {
                limits
                    .per_endpoint
                    .saturating_sub(busy.endpoints.get(&endpoint).copied().unwrap_or(0))
            };
            let tenant_room = limits
                .per_tenant
                .saturating_sub(tenants.get(&tenant).copied().unwrap_or(0));
            let take = room.min(left).min(tenant_room);
            if take == 0 {
                continue;
            }
            let found: Vec<i64> = with_tx!(&mut tx, |conn| sqlx::query_scalar(QUEUE_HEAD)
                .bind(&endpoint)
                .bind(now)
                .bind(QUEUE_WINDOW)
                .bind(i64::try_from(take).unwrap_or(i64::MAX))
                .fetch_all(conn)
                .await)?;
            if found.is_empty() {
                continue;
            }
            *tenants.entry(tenant).or_default() += found.len();
            seqs.extend(found);
            if failures > 0 {
                probed.push(endpoint);
            } else {
                served.push(endpoint);
            }
        }
        if seqs.is_empty() {
            tx.commit().await?;
            return Ok(vec![]);
        }
        let sql = format!(
            "select d.seq, d.id, d.tenant_id, d.endpoint_id, w.url, w.secret, w.previous_secret, \
             w.previous_secret_until, d.event_id, e.type as event_type, e.actor, e.payload, d.attempts \
             from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id \
             join events e on e.id = d.event_id where d.seq in ({}) order by d.seq",
            placeholders(1, seqs.len())
        );
        let rows: Vec<ClaimRow> = with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query_as(&sql);
            for seq in &seqs {
                q = q.bind(*seq);
            }
            q.fetch_all(conn).await
        })?;
        // Secrets are opened before anything is claimed: a row whose secret
        // cannot be opened (sealed under a key this instance was not given) is
        // left pending, for an instance that can, and holds up no other row.
        let sealer = self.sealer();
        let open = |stored: &str| sealer.open(Purpose::SigningSecret, stored);
        let mut claimed = Vec::with_capacity(rows.len());
        for r in rows {
            let mut secrets = match open(&r.secret) {
                Ok(secret) => vec![secret],
                Err(err) => {
                    if !probed.contains(&r.endpoint_id) {
                        tracing::warn!(endpoint = %r.endpoint_id, error = %err, "a webhook secret cannot be opened; its deliveries wait");
                        // Held like a probe, so it is looked at again once a lease
                        // has passed rather than on every round.
                        served.retain(|e| *e != r.endpoint_id);
                        probed.push(r.endpoint_id);
                    }
                    continue;
                }
            };
            if let (Some(previous), Some(until)) = (&r.previous_secret, r.previous_secret_until) {
                if until > now {
                    match open(previous) {
                        Ok(secret) => secrets.push(secret),
                        Err(err) => {
                            tracing::warn!(endpoint = %r.endpoint_id, error = %err, "a previous webhook secret cannot be opened; only the current one signs")
                        }
                    }
                }
            }
            claimed.push(ClaimedDelivery {
                seq: r.seq,
                id: r.id,
                tenant_id: r.tenant_id,
                endpoint_id: r.endpoint_id,
                url: r.url,
                secrets,
                event_id: r.event_id,
                event_type: r.event_type,
                actor: r.actor,
                payload: r.payload,
                // The claim below counts this attempt.
                attempt: r.attempts + 1,
            });
        }
        let seqs: Vec<i64> = claimed.iter().map(|d| d.seq).collect();
        if seqs.is_empty() {
            tx.commit().await?;
            return Ok(vec![]);
        }
        let claim = format!(
            "update webhook_deliveries set state = 'delivering', lease_until = $1, attempts = attempts + 1 \
             where seq in ({})",
            placeholders(2, seqs.len())
        );
        with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query(&claim).bind(lease_until);
            for seq in &seqs {
                q = q.bind(*seq);
            }
            q.execute(conn).await.map(|r| r.rows_affected())
        })?;
        // A served endpoint goes to the back of the line; a probed one is held
        // until its probe is recorded (or its lease ends).
        for (ids, until) in [(&served, now), (&probed, lease_until)] {
            if ids.is_empty() {
                continue;
            }
            let sql = format!(
                "update webhook_endpoints set next_attempt_at = $1 where id in ({})",
                placeholders(2, ids.len())
            );
            with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql).bind(until);
                for id in ids.iter() {
                    q = q.bind(id);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        tx.commit().await?;
        Ok(claimed)
    }

    /// When the worker should look again: the earliest future time at which a held
    /// endpoint reopens, a retry falls due, or a claim's lease ends. `None` when
    /// nothing is scheduled (new events wake the worker themselves). Costs an index
    /// probe per enabled endpoint, never a scan of a queue.
    pub async fn next_delivery_due(&self) -> CoreResult<Option<i64>> {
        let now = now_ms();
        let (endpoint, lease): (Option<i64>, Option<i64>) = with_db!(self.db(), |pool| {
            sqlx::query_as(NEXT_DUE).bind(now).fetch_one(pool).await
        })?;
        Ok(endpoint.into_iter().chain(lease).min())
    }

    /// Gives back every claimed delivery (SQLite at start: the only worker died with
    /// its claims), as the same attempt, and lets their endpoints be tried at once.
    /// PostgreSQL instances rely on leases instead.
    pub async fn release_claims(&self) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set next_attempt_at = $1 where next_attempt_at > $1 and id in \
             (select endpoint_id from webhook_deliveries where state = 'delivering')"
        )
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let released = with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_deliveries set state = 'pending', lease_until = null, \
             attempts = case when attempts > 0 then attempts - 1 else 0 end where state = 'delivering'"
        )
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(released)
    }

    /// Records finished attempts in one short transaction and decides what follows
    /// each: done, a retry (per `policy` and `Retry-After`), failed, or a disabled
    /// endpoint; and moves each endpoint's circuit. The log rows go in with one
    /// statement per [`ATTEMPT_ROWS`], successes with one per status code; only
    /// failures (which the circuits keep few) take a statement each. Returns the ids
    /// of endpoints disabled now.
    pub async fn record_attempts(&self, results: &[AttemptResult], policy: &RetryPolicy) -> CoreResult<Vec<String>> {
        if results.is_empty() {
            return Ok(vec![]);
        }
        let now = now_ms();
        let mut disabled = Vec::new();
        let mut tx = self.db().begin().await?;
        for chunk in results.chunks(ATTEMPT_ROWS) {
            let sql = format!(
                "insert into webhook_attempts (id, delivery_id, endpoint_id, tenant_id, attempt, started_at, \
                 duration_ms, status_code, error, response_excerpt) values {}",
                value_rows(chunk.len(), 10)
            );
            with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql);
                for r in chunk {
                    q = q
                        .bind(uuid::Uuid::now_v7().to_string())
                        .bind(&r.delivery_id)
                        .bind(&r.endpoint_id)
                        .bind(&r.tenant_id)
                        .bind(r.attempt)
                        .bind(r.started_at)
                        .bind(r.duration_ms)
                        .bind(r.status_code.map(i64::from))
                        .bind(&r.error)
                        .bind(&r.response_excerpt);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        // Successes, one statement per status code.
        let mut succeeded: BTreeMap<Option<u16>, Vec<i64>> = BTreeMap::new();
        for r in results.iter().filter(|r| r.outcome == Outcome::Delivered) {
            succeeded.entry(r.status_code).or_default().push(r.seq);
        }
        for (status, seqs) in &succeeded {
            for seqs in seqs.chunks(ATTEMPT_ROWS) {
                let sql = format!(
                    "update webhook_deliveries set state = 'succeeded', completed_at = $1, last_status = $2, \
                     last_error = null, lease_until = null where seq in ({})",
                    placeholders(3, seqs.len())
                );
                with_tx!(&mut tx, |conn| {
                    let mut q = sqlx::query(&sql).bind(now).bind(status.map(i64::from));
                    for seq in seqs {
                        q = q.bind(*seq);
                    }
                    q.execute(conn).await.map(|r| r.rows_affected())
                })?;
            }
        }
        for r in results {
            let status = r.status_code.map(i64::from);
            match &r.outcome {
                Outcome::Delivered => {}
                Outcome::Failed { retry_after } => {
                    let next = policy
                        .schedule
                        .after(r.attempt)
                        .map(|wait| now + duration_ms(wait.max(policy.asked(*retry_after))));
                    with_tx!(&mut tx, |conn| sqlx::query(
                        "update webhook_deliveries set state = $2, next_attempt_at = coalesce($3, next_attempt_at), \
                         completed_at = $4, last_status = $5, last_error = $6, lease_until = null where seq = $1"
                    )
                    .bind(r.seq)
                    .bind(if next.is_some() { "pending" } else { "failed" })
                    .bind(next)
                    .bind(if next.is_some() { None } else { Some(now) })
                    .bind(status)
                    .bind(&r.error)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected()))?;
                }
                Outcome::Gone => {
                    with_tx!(&mut tx, |conn| sqlx::query(
                        "update webhook_deliveries set state = 'failed', completed_at = $2, last_status = $3, \
                         last_error = 'the endpoint answered 410 Gone', lease_until = null where seq = $1"
                    )
                    .bind(r.seq)
                    .bind(now)
                    .bind(status)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected()))?;
                    if disable_endpoint(&mut tx, &r.tenant_id, &r.endpoint_id, "the endpoint answered 410 Gone").await?
                    {
                        disabled.push(r.endpoint_id.clone());
                    }
                }
            }
        }
        // Each endpoint's circuit, moved by its attempts in the order they ended.
        let mut endpoints: Vec<&str> = results.iter().map(|r| r.endpoint_id.as_str()).collect();
        endpoints.sort_unstable();
        endpoints.dedup();
        let sql = format!(
            "select id, tenant_id, failures, next_attempt_at, last_failure_at, failing_since from webhook_endpoints \
             where id in ({})",
            placeholders(1, endpoints.len())
        );
        let rows: Vec<CircuitRow> = with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query_as(&sql);
            for id in &endpoints {
                q = q.bind(*id);
            }
            q.fetch_all(conn).await
        })?;
        for row in rows {
            let before = row.circuit();
            let mut circuit = before;
            let mut failed = false;
            for r in results.iter().filter(|r| r.endpoint_id == row.id) {
                circuit.record(r.started_at, &r.outcome, policy, now);
                failed |= matches!(r.outcome, Outcome::Failed { .. });
            }
            if circuit != before {
                with_tx!(&mut tx, |conn| sqlx::query(
                    "update webhook_endpoints set failures = $2, next_attempt_at = $3, last_failure_at = $4, \
                     failing_since = $5 where id = $1"
                )
                .bind(&row.id)
                .bind(circuit.failures)
                .bind(circuit.next_attempt_at)
                .bind(circuit.last_failure_at)
                .bind(circuit.failing_since)
                .execute(conn)
                .await
                .map(|r| r.rows_affected()))?;
            }
            if failed && circuit.failing_for(now) >= duration_ms(policy.disable_after) {
                let reason = format!(
                    "every delivery failed for {} s; enable it again once the receiver works",
                    policy.disable_after.as_secs()
                );
                if disable_endpoint(&mut tx, &row.tenant_id, &row.id, &reason).await? {
                    disabled.push(row.id.clone());
                }
            }
        }
        tx.commit().await?;
        Ok(disabled)
    }

    /// A page of an endpoint's deliveries, newest first.
    pub async fn list_deliveries(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        page: &PageRequest,
    ) -> CoreResult<Page<Delivery>> {
        let paging = Paging::from_request(page)?;
        self.get_webhook(tenant_id, endpoint_id).await?;
        let sql = "select d.id, d.event_id, e.type as event_type, d.state, d.attempts, d.next_attempt_at, \
             d.last_status, d.last_error, d.created_at, d.completed_at from webhook_deliveries d \
             join events e on e.id = d.event_id where d.tenant_id = $1 and d.endpoint_id = $2 \
             order by d.seq desc limit $3 offset $4";
        let (total, rows): (i64, Vec<DeliveryRow>) = with_db!(self.db(), |pool| {
            let total: i64 =
                sqlx::query_scalar("select count(*) from webhook_deliveries where tenant_id = $1 and endpoint_id = $2")
                    .bind(tenant_id)
                    .bind(endpoint_id)
                    .fetch_one(pool)
                    .await?;
            let rows = sqlx::query_as(sql)
                .bind(tenant_id)
                .bind(endpoint_id)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(pool)
                .await?;
            Ok::<_, sqlx::Error>((total, rows))
        })?;
        Ok(paging.page(
            total,
            rows.into_iter()
                .map(|r| Delivery {
                    id: r.id,
                    event_id: r.event_id,
                    event_type: r.event_type,
                    next_attempt_at: (r.state == "pending").then(|| from_ms(r.next_attempt_at)),
                    state: r.state,
                    attempts: r.attempts,
                    last_status: r.last_status,
                    last_error: r.last_error,
                    created_at: from_ms(r.created_at),
                    completed_at: r.completed_at.map(from_ms),
                })
                .collect(),
        ))
    }

    /// A page of an endpoint's attempts, newest first: the delivery log.
    pub async fn list_attempts(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        page: &PageRequest,
    ) -> CoreResult<Page<Attempt>> {
        let paging = Paging::from_request(page)?;
        self.get_webhook(tenant_id, endpoint_id).await?;
        let sql = "select a.id, a.delivery_id, d.event_id, e.type as event_type, a.attempt, a.started_at, \
             a.duration_ms, a.status_code, a.error, a.response_excerpt from webhook_attempts a \
             join webhook_deliveries d on d.id = a.delivery_id join events e on e.id = d.event_id \
             where a.tenant_id = $1 and a.endpoint_id = $2 order by a.started_at desc, a.id desc limit $3 offset $4";
        let (total, rows): (i64, Vec<AttemptRow>) = with_db!(self.db(), |pool| {
            let total: i64 =
                sqlx::query_scalar("select count(*) from webhook_attempts where tenant_id = $1 and endpoint_id = $2")
                    .bind(tenant_id)
                    .bind(endpoint_id)
                    .fetch_one(pool)
                    .await?;
            let rows = sqlx::query_as(sql)
                .bind(tenant_id)
                .bind(endpoint_id)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(pool)
                .await?;
            Ok::<_, sqlx::Error>((total, rows))
        })?;
        Ok(paging.page(
            total,
            rows.into_iter()
                .map(|r| Attempt {
                    id: r.id,
                    delivery_id: r.delivery_id,
                    event_id: r.event_id,
                    event_type: r.event_type,
                    attempt: r.attempt,
                    at: from_ms(r.started_at),
                    duration_ms: r.duration_ms,
                    status_code: r.status_code,
                    error: r.error,
                    response_excerpt: r.response_excerpt,
                })
                .collect(),
        ))
    }

    /// Sends a delivery again, with its original `webhook-id`, on a fresh schedule.
    /// A delivery in flight cannot be replayed (409).
    pub async fn replay_delivery(
        &self,
        tenant_id: &str,
        endpoint_id: &str,
        delivery_id: &str,
        actor: &Actor,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let state: Option<String> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
            "select state from webhook_deliveries where tenant_id = $1 and endpoint_id = $2 and id = $3"
        )
        .bind(tenant_id)
        .bind(endpoint_id)
        .bind(delivery_id)
        .fetch_optional(conn)
        .await)?;
        match state.as_deref() {
            None => return Err(CoreError::NotFound("delivery")),
            Some("delivering") => {
                return Err(CoreError::Conflict {
                    field: None,
                    code: "delivery_in_flight",
                    message: "the delivery is being attempted right now; replay it once the attempt ends".into(),
                })
            }
            _ => {}
        }
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_deliveries set state = 'pending', attempts = 0, next_attempt_at = $2, completed_at = null \
             where id = $1"
        )
        .bind(delivery_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        // An admin who replays expects an attempt now, not at the end of the
        // endpoint's hold; if its circuit is open, the replay is the probe.
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set next_attempt_at = $2 where id = $1 and next_attempt_at > $2"
        )
        .bind(endpoint_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "webhook.replay",
            "webhook",
            Some(endpoint_id),
        )
        .await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(())
    }

    /// Deliveries not yet finished, over every tenant (for metrics and tests).
    pub async fn unfinished_deliveries(&self) -> CoreResult<i64> {
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(
            "select count(*) from webhook_deliveries where state in ('pending', 'delivering')"
        )
        .fetch_one(pool)
        .await)?)
    }
}

/// Disables an endpoint (once) and audits it as Rapport's own act.
async fn disable_endpoint(
    tx: &mut crate::db::Tx,
    tenant_id: &str,
    endpoint_id: &str,
    reason: &str,
) -> CoreResult<bool> {
    let changed = with_tx!(tx, |conn| {
        sqlx::query(
        "update webhook_endpoints set enabled = false, disabled_reason = $2, updated_at = $3 where id = $1 and enabled"
    )
    .bind(endpoint_id)
    .bind(reason)
    .bind(now_ms())
    .execute(conn)
    .await
    .map(|r| r.rows_affected())
    })?;
    if changed > 0 {
        audit::record(
            tx,
            Some(tenant_id),
            &Actor::system("webhooks"),
            "webhook.disable",
            "webhook",
            Some(endpoint_id),
        )
        .await?;
    }
    Ok(changed > 0)
}

/// Every event type with its meaning, for `GET /rest/v1/webhook/eventtypes`.
pub fn event_catalogue() -> Vec<(EventType, &'static str)> {
    EventType::ALL
        .into_iter()
        .map(|t| {
            let what = match t {
                EventType::ConversationCreated => {
                    "a customer was created, or its conversation went from DONE to UNREAD; body: Conversation"
                }
                EventType::ConversationStatusChanged => "a conversation's status changed; body: Conversation",
                EventType::MessageReceived => "a customer sent a message; body: Message",
                EventType::MessageSent => "a message was sent to a customer; body: Message",
                EventType::CustomerCreated => "a customer was created; body: Customer",
                EventType::CustomerUpdated => "a customer's fields changed; body: Customer",
                EventType::CustomerDeleted => "a customer was deleted; body: Customer as it was",
                EventType::CustomerAssigned => "a customer was assigned or unassigned; body: Customer",
                EventType::WebhookTest => "sent on request to one endpoint (not subscribable)",
                EventType::WatchdogAlert => {
                    "a watchdog fired; sent to its WEBHOOK receivers only (not subscribable); body: the alert"
                }
                EventType::SlaMissed => {
                    "an SLA clock was missed; sent to WEBHOOK receivers only (not subscribable); body: the alert"
                }
            };
            (t, what)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        let s = Duration::from_secs;
        RetryPolicy {
            schedule: Backoff::new(vec![s(5), s(60), s(600)]),
            disable_after: s(3600),
            max_retry_after: s(1800),
        }
    }

    const CLOSED: Circuit = Circuit {
        failures: 0,
        next_attempt_at: 0,
        last_failure_at: None,
        failing_since: None,
    };
    const FAILED: Outcome = Outcome::Failed { retry_after: None };

    #[test]
    fn the_hold_follows_the_schedule_and_then_keeps_its_last_wait() {
        let p = policy();
        let s = Duration::from_secs;
        assert_eq!(p.hold(1), s(5));
        assert_eq!(p.hold(3), s(600));
        assert_eq!(p.hold(4), s(600));
        assert_eq!(p.hold(40), s(600));
        assert_eq!(p.asked(Some(s(7200))), s(1800), "Retry-After is capped");
        assert_eq!(p.asked(None), s(0));
    }

    #[test]
    fn a_failure_holds_the_endpoint_and_a_burst_counts_once() {
        let p = policy();
        let mut c = CLOSED;
        // Three attempts were under way; the first failure opens the circuit.
        c.record(1_000, &FAILED, &p, 2_000);
        assert_eq!((c.failures, c.next_attempt_at), (1, 7_000));
        assert_eq!(c.failing_since, Some(1_000));
        // The others started before it opened: no second step up the schedule.
        c.record(1_100, &FAILED, &p, 2_100);
        c.record(900, &FAILED, &p, 2_200);
        assert_eq!((c.failures, c.next_attempt_at), (1, 7_000));
        assert_eq!(c.failing_since, Some(900));
        // The probe after the hold fails: the next, longer wait.
        c.record(7_000, &FAILED, &p, 7_500);
        assert_eq!((c.failures, c.next_attempt_at), (2, 67_500));
        assert_eq!(c.failing_for(67_500), 66_600);
    }

    #[test]
    fn retry_after_lengthens_the_hold_even_from_a_stale_attempt() {
        let p = policy();
        let mut c = CLOSED;
        let asked = Outcome::Failed {
            retry_after: Some(Duration::from_secs(120)),
        };
        c.record(1_000, &asked, &p, 2_000);
        assert_eq!((c.failures, c.next_attempt_at), (1, 122_000));
        c.record(1_500, &asked, &p, 3_000);
        assert_eq!((c.failures, c.next_attempt_at), (1, 123_000));
    }

    #[test]
    fn a_success_closes_the_circuit() {
        let p = policy();
        let mut c = CLOSED;
        c.record(1_000, &FAILED, &p, 2_000);
        // A probe was claimed at the reopening: the endpoint is held for its lease.
        c.next_attempt_at = 67_000;
        c.record(7_000, &Outcome::Delivered, &p, 7_300);
        assert_eq!(
            c,
            Circuit {
                failures: 0,
                next_attempt_at: 7_300,
                last_failure_at: None,
                failing_since: None,
            }
        );
        assert_eq!(c.failing_for(9_000), i64::MIN);
        // After a success, a failure counts from the start again.
        c.record(8_000, &FAILED, &p, 8_100);
        assert_eq!((c.failures, c.next_attempt_at), (1, 13_100));
    }

    #[test]
    fn multi_row_values() {
        assert_eq!(value_rows(2, 3), "($1, $2, $3), ($4, $5, $6)");
    }
}
