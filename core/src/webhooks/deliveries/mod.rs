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
//! - while it fails, or while a batch of its queue is unfinished, an endpoint
//!   gets no new rows: it falls behind in the event stream and catches up once
//!   it may be tried again, a batch at a time;
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
//!
//! The parts: [`fanout`] (events written by a commit become deliveries, after
//! it), [`catch_up`] (an endpoint that fell behind while failing gets them
//! later, in order), [`circuit`] (an endpoint's circuit), [`claim`] (what a worker
//! claims, and when it should look again), [`attempts`] (recording what came of
//! them) and [`log`] (the delivery log and replay, and the event catalogue).

mod attempts;
mod catch_up;
mod circuit;
mod claim;
mod fanout;
mod log;

pub use attempts::ATTEMPT_ROWS;
pub(crate) use catch_up::{close_gap, open_gap, owed as owed_by_endpoint_behind};
pub use circuit::Circuit;
pub use claim::{work_finding_statements, Busy, ClaimLimits, WorkParam, QUEUE_WINDOW};
pub(crate) use fanout::position as catch_up_position;
pub use fanout::FANOUT_BATCH;
pub use log::event_catalogue;

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
    ids::{TenantId, WebhookId},
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
    pub tenant_id: TenantId,
    /// Endpoint.
    pub endpoint_id: WebhookId,
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
    pub tenant_id: TenantId,
    /// Its endpoint.
    pub endpoint_id: WebhookId,
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
    tenant_id: TenantId,
    endpoint_id: WebhookId,
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
