//! The delivery queue: claiming due deliveries, recording attempts, the delivery
//! log and replay. The HTTP side (signing, sending, the SSRF guard) is the server's
//! worker; everything it decides is stored here, so it survives restarts.
//!
//! A delivery is `pending` until a worker claims it (`delivering`, with a lease),
//! then `succeeded`, `pending` again with a later `next_attempt_at`, or `failed`
//! once the retry schedule is used up. A claim takes only the oldest unfinished
//! delivery of each (endpoint, customer) pair, which is what keeps one customer's
//! events in order at each endpoint. On PostgreSQL the claim locks rows with
//! `FOR UPDATE SKIP LOCKED`, so several instances never claim the same attempt; a
//! lease that runs out (its instance died) makes the delivery claimable again.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    backoff::Backoff,
    db::{placeholders, Backend},
    error::{CoreError, CoreResult},
    events::EventType,
    model::{Page, PageRequest},
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

impl Services {
    /// Claims up to `limit` due deliveries for `lease`; each claim counts as an attempt.
    pub async fn claim_deliveries(&self, limit: i64, lease: Duration) -> CoreResult<Vec<ClaimedDelivery>> {
        let now = now_ms();
        let lock = match self.db().backend() {
            Backend::Postgres => "for update of d skip locked",
            Backend::Sqlite => "",
        };
        let claim = format!(
            "update webhook_deliveries set state = 'delivering', lease_until = $2, attempts = attempts + 1 \
             where seq in (select d.seq from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id \
               where w.enabled and ((d.state = 'pending' and d.next_attempt_at <= $1) \
                 or (d.state = 'delivering' and d.lease_until <= $1)) \
               and not exists (select 1 from webhook_deliveries e where e.endpoint_id = d.endpoint_id \
                 and e.ordering_key = d.ordering_key and e.seq < d.seq and e.state in ('pending', 'delivering')) \
               order by d.seq limit $3 {lock}) \
             returning seq"
        );
        let seqs: Vec<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(&claim)
            .bind(now)
            .bind(now + duration_ms(lease))
            .bind(limit)
            .fetch_all(pool)
            .await)?;
        if seqs.is_empty() {
            return Ok(vec![]);
        }
        let sql = format!(
            "select d.seq, d.id, d.tenant_id, d.endpoint_id, w.url, w.secret, w.previous_secret, \
             w.previous_secret_until, d.event_id, e.type as event_type, e.actor, e.payload, d.attempts \
             from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id \
             join events e on e.id = d.event_id where d.seq in ({}) order by d.seq",
            placeholders(1, seqs.len())
        );
        let rows: Vec<ClaimRow> = with_db!(self.db(), |pool| {
            let mut q = sqlx::query_as(&sql);
            for seq in &seqs {
                q = q.bind(*seq);
            }
            q.fetch_all(pool).await
        })?;
        Ok(rows
            .into_iter()
            .map(|r| {
                let mut secrets = vec![r.secret];
                if let (Some(previous), Some(until)) = (r.previous_secret, r.previous_secret_until) {
                    if until > now {
                        secrets.push(previous);
                    }
                }
                ClaimedDelivery {
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
                    attempt: r.attempts,
                }
            })
            .collect())
    }

    /// Gives back every claimed delivery (SQLite at start: the only worker died with
    /// its claims). PostgreSQL instances rely on leases instead.
    pub async fn release_claims(&self) -> CoreResult<u64> {
        Ok(with_db!(self.db(), |pool| sqlx::query(
            "update webhook_deliveries set state = 'pending', lease_until = null, \
             attempts = case when attempts > 0 then attempts - 1 else 0 end where state = 'delivering'"
        )
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?)
    }

    /// Records finished attempts in one transaction and decides what follows each:
    /// done, a retry (per `policy` and `Retry-After`), failed, or a disabled endpoint.
    /// Returns the ids of endpoints disabled now.
    pub async fn record_attempts(&self, results: &[AttemptResult], policy: &RetryPolicy) -> CoreResult<Vec<String>> {
        if results.is_empty() {
            return Ok(vec![]);
        }
        let now = now_ms();
        let mut disabled = Vec::new();
        let mut tx = self.db().begin().await?;
        for r in results {
            with_tx!(&mut tx, |conn| sqlx::query(
                "insert into webhook_attempts (id, delivery_id, endpoint_id, tenant_id, attempt, started_at, \
                 duration_ms, status_code, error, response_excerpt) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            )
            .bind(uuid::Uuid::now_v7().to_string())
            .bind(&r.delivery_id)
            .bind(&r.endpoint_id)
            .bind(&r.tenant_id)
            .bind(r.attempt)
            .bind(r.started_at)
            .bind(r.duration_ms)
            .bind(r.status_code.map(i64::from))
            .bind(&r.error)
            .bind(&r.response_excerpt)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
            let status = r.status_code.map(i64::from);
            match &r.outcome {
                Outcome::Delivered => {
                    with_tx!(&mut tx, |conn| sqlx::query(
                        "update webhook_deliveries set state = 'succeeded', completed_at = $2, last_status = $3, \
                         last_error = null, lease_until = null where seq = $1"
                    )
                    .bind(r.seq)
                    .bind(now)
                    .bind(status)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected()))?;
                    with_tx!(&mut tx, |conn| sqlx::query(
                        "update webhook_endpoints set failing_since = null where id = $1 and failing_since is not null"
                    )
                    .bind(&r.endpoint_id)
                    .execute(conn)
                    .await
                    .map(|r| r.rows_affected()))?;
                }
                Outcome::Failed { retry_after } => {
                    let wait = policy.schedule.after(r.attempt);
                    let next = wait.map(|w| {
                        let asked = retry_after.map(|a| a.min(policy.max_retry_after)).unwrap_or_default();
                        now + duration_ms(w.max(asked))
                    });
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
                    let failing_since: Option<i64> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
                        "update webhook_endpoints set failing_since = coalesce(failing_since, $2) where id = $1 \
                         returning failing_since"
                    )
                    .bind(&r.endpoint_id)
                    .bind(r.started_at)
                    .fetch_optional(conn)
                    .await)?
                    .flatten();
                    if failing_since.is_some_and(|since| now - since >= duration_ms(policy.disable_after)) {
                        let reason = format!(
                            "every delivery failed for {} s; enable it again once the receiver works",
                            policy.disable_after.as_secs()
                        );
                        if disable_endpoint(&mut tx, &r.tenant_id, &r.endpoint_id, &reason).await? {
                            disabled.push(r.endpoint_id.clone());
                        }
                    }
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
            };
            (t, what)
        })
        .collect()
}
