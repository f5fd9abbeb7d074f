//! Durable jobs: timers and background tasks kept in the `jobs` table, run by the
//! one job runner (`server/src/workers`).
//!
//! A job has a kind, a key, a due time, a lease and an attempt count. `(kind, key)`
//! is unique: scheduling a timer that exists moves it (new due time and payload)
//! instead of adding a second one, so callers name their timers by what they are
//! about (`<tenant>:<customer>` and so on) and never need to look first.
//!
//! Jobs are scheduled inside the caller's transaction ([`schedule`]), so a timer
//! exists exactly when the change that needs it was committed.

use crate::{db::Tx, error::CoreResult, time::now_ms, with_tx};

/// The kinds of job. Each names the module that handles it.
pub mod kinds {
    /// A waiting customer message reached a `NO_ANSWER` threshold (`engine::routing`).
    pub const NO_ANSWER: &str = "routing.no_answer";
    /// A queued conversation waited `maxWaitSeconds` (`engine::routing`).
    pub const QUEUE_TIMEOUT: &str = "routing.queue_timeout";
    /// An SLA clock's deadline (`engine::sla`).
    pub const SLA_DEADLINE: &str = "sla.deadline";
    /// The end of a watchdog's grouping window (`engine::watchdogs`).
    pub const WATCHDOG_SUMMARY: &str = "watchdog.summary";
    /// Deleting finished work older than the retention period (`retention`).
    pub const RETENTION: &str = "retention";
    /// Sending one mail of the outbox (`server/src/mail.rs`).
    pub const MAIL: &str = "mail.deliver";
}

/// Schedules (or moves) the job `(kind, key)` to run at `due_at` (unix ms) with
/// `payload`, in `tx`. A moved job loses its lease and attempts: it is a new timer.
pub async fn schedule(
    tx: &mut Tx,
    tenant_id: Option<&str>,
    kind: &str,
    key: &str,
    due_at: i64,
    payload: &serde_json::Value,
) -> CoreResult<()> {
    let payload = payload.to_string();
    with_tx!(tx, |conn| sqlx::query(
        "insert into jobs (id, tenant_id, kind, job_key, payload, due_at, created_at) \
         values ($1, $2, $3, $4, $5, $6, $7) \
         on conflict (kind, job_key) do update set payload = excluded.payload, due_at = excluded.due_at, \
         lease_until = null, attempts = 0, last_error = null"
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(tenant_id)
    .bind(kind)
    .bind(key)
    .bind(&payload)
    .bind(due_at)
    .bind(now_ms())
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Cancels the job `(kind, key)` in `tx`, if it exists.
pub async fn cancel(tx: &mut Tx, kind: &str, key: &str) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query("delete from jobs where kind = $1 and job_key = $2")
        .bind(kind)
        .bind(key)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Cancels every job of `kind` whose key starts with `prefix`, in `tx` (for
/// example every `NO_ANSWER` timer of one conversation).
pub async fn cancel_prefix(tx: &mut Tx, kind: &str, prefix: &str) -> CoreResult<()> {
    let pattern = format!("{}%", prefix.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_"));
    with_tx!(tx, |conn| sqlx::query("delete from jobs where kind = $1 and job_key like $2 escape '\\'")
        .bind(kind)
        .bind(&pattern)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A claimed job, as a handler receives it.
#[derive(Debug, Clone)]
pub struct Job {
    /// Row id.
    pub id: String,
    /// The tenant it belongs to; `None` for instance-wide work (retention).
    pub tenant_id: Option<String>,
    /// One of [`kinds`].
    pub kind: String,
    /// Its key, unique within the kind.
    pub key: String,
    /// What the scheduler passed along.
    pub payload: serde_json::Value,
    /// When it was due (unix ms).
    pub due_at: i64,
    /// Runs before this one (0 on the first).
    pub attempts: i64,
}
