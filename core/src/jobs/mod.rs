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
//!
//! The runner's side:
//! - [`Services::claim_jobs`] leases due jobs (`due_at <= now`, no live lease),
//!   oldest due first, and counts the attempt. On PostgreSQL the rows are picked
//!   with `FOR UPDATE SKIP LOCKED`, so instances sharing the database never claim
//!   the same job; on SQLite the claim goes through the single writer, after a
//!   probe on the read pool so that an idle runner does not queue for the writer
//!   five times a second.
//! - [`Services::complete_job`] deletes a job that ran, unless its handler (or
//!   anyone) scheduled it again meanwhile: a recurring job moves itself forward and
//!   survives its own completion.
//! - [`Services::fail_job`] records the error and retries later, or gives up and
//!   deletes the job.
//! - [`Services::defer_job`] puts a job back without counting the run, for work
//!   that cannot run here yet (mail without an SMTP server is parked).
//!
//! A lease that lapses (its runner died, or took longer than the lease) makes the
//! job claimable again: jobs run at least once, so handlers are written to be
//! safe to repeat. Each claim is told apart by the job's `due_at` and attempt
//! count, so a runner that finishes late cannot delete or move a job that was
//! claimed again, or scheduled again, after it.

mod kind;

pub use kind::{JobKind, Payload};

use crate::{
    db::{Backend, Tx},
    error::CoreResult,
    ids::TenantId,
    time::now_ms,
    with_db, with_tx, Services,
};

/// [`schedule`] with a typed payload: the job `(P::KIND, key)` runs at `due_at`.
pub async fn schedule_payload<P: Payload>(
    tx: &mut Tx,
    tenant_id: Option<&TenantId>,
    key: &str,
    due_at: i64,
    payload: &P,
) -> CoreResult<()> {
    let value = serde_json::to_value(payload).map_err(|e| crate::error::CoreError::Internal(e.to_string()))?;
    schedule(tx, tenant_id, P::KIND, key, due_at, &value).await
}

/// The due time of a parked job: it never falls due until someone schedules it
/// again (mail kept in the outbox while no SMTP server is configured).
pub const PARKED: i64 = i64::MAX;

/// Longest error text kept on a job.
const ERROR_CHARS: usize = 2000;

/// Schedules (or moves) the job `(kind, key)` to run at `due_at` (unix ms) with
/// `payload`, in `tx`. A moved job loses its lease and attempts: it is a new timer.
pub async fn schedule(
    tx: &mut Tx,
    tenant_id: Option<&TenantId>,
    kind: JobKind,
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
    .bind(kind.as_str())
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
pub async fn cancel(tx: &mut Tx, kind: JobKind, key: &str) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "delete from jobs where kind = $1 and job_key = $2"
    )
    .bind(kind.as_str())
    .bind(key)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Cancels every job of `kind` whose key starts with `prefix`, in `tx` (for
/// example every `NO_ANSWER` timer of one conversation).
pub async fn cancel_prefix(tx: &mut Tx, kind: JobKind, prefix: &str) -> CoreResult<()> {
    let pattern = format!(
        "{}%",
        prefix.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_")
    );
    with_tx!(tx, |conn| sqlx::query(
        "delete from jobs where kind = $1 and job_key like $2 escape '\\'"
    )
    .bind(kind.as_str())
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
    pub tenant_id: Option<TenantId>,
    /// Its kind as stored: one of [`JobKind`] (see [`Job::job_kind`]).
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

impl Job {
    /// Its kind, when this version knows it.
    pub fn job_kind(&self) -> Option<JobKind> {
        JobKind::parse(&self.kind)
    }

    /// The job's payload as `P`, when the job is of `P`'s kind and its payload
    /// reads as one (a job stored by an older version may not: it is then
    /// dropped as done, as any job whose subject is gone).
    pub fn read<P: Payload>(&self) -> Option<P> {
        if self.kind != P::KIND.as_str() {
            return None;
        }
        serde_json::from_value(self.payload.clone())
            .inspect_err(
                |e| tracing::warn!(kind = %self.kind, key = %self.key, error = %e, "a job's payload does not read"),
            )
            .ok()
    }
}

#[derive(sqlx::FromRow)]
struct JobRow {
    id: String,
    tenant_id: Option<TenantId>,
    kind: String,
    job_key: String,
    payload: String,
    due_at: i64,
    attempts: i64,
}

impl JobRow {
    fn into_job(self) -> Job {
        Job {
            id: self.id,
            tenant_id: self.tenant_id,
            kind: self.kind,
            key: self.job_key,
            // A payload is written by `schedule` from a JSON value; anything else
            // reaches the handler as null rather than stopping the runner.
            payload: serde_json::from_str(&self.payload).unwrap_or(serde_json::Value::Null),
            due_at: self.due_at,
            // The claim counted this run already.
            attempts: self.attempts - 1,
        }
    }
}

/// Is there a due, unleased job? `$1`: now. Reads the due range of
/// `jobs_due_idx`, in its order: unordered, a `limit 1` may be planned as a
/// scan of the whole table that is hoped to end early.
const ANY_DUE: &str = "select due_at from jobs where due_at <= $1 and (lease_until is null or lease_until <= $1) \
     order by due_at limit 1";

/// Matches the row of one claim and nothing else: the same job, not moved by a
/// `schedule` since (that sets a new due time, clears the lease and the attempts)
/// and not claimed again since (that counts one more attempt). `$1`: id, `$2`:
/// the claimed due time, `$3`: the attempt count the claim left.
const THIS_CLAIM: &str = "id = $1 and due_at = $2 and attempts = $3 and lease_until is not null";

fn truncated(error: &str) -> String {
    error.chars().take(ERROR_CHARS).collect()
}

impl Services {
    /// Leases up to `limit` due jobs for `lease_ms`, oldest due first, and counts
    /// the attempt. A job is due when its `due_at` has passed and it has no live
    /// lease (never claimed, or its lease lapsed). Jobs of every tenant: the runner
    /// is the instance's.
    pub async fn claim_jobs(&self, limit: i64, lease_ms: i64) -> CoreResult<Vec<Job>> {
        if limit <= 0 {
            return Ok(Vec::new());
        }
        let now = now_ms();
        let backend = self.db().backend();
        if backend == Backend::Sqlite {
            // Reads never wait for the writer; only take it when there is work.
            let due: Option<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(ANY_DUE)
                .bind(now)
                .fetch_optional(pool)
                .await)?;
            if due.is_none() {
                return Ok(Vec::new());
            }
        }
        let lock = match backend {
            Backend::Postgres => "for update skip locked",
            Backend::Sqlite => "",
        };
        // Ordered by `due_at` alone, the order of `jobs_due_idx`: the due range is
        // read in index order and never sorted, however many jobs are due.
        let sql = format!(
            "update jobs set lease_until = $2, attempts = attempts + 1 \
             where id in (select id from jobs where due_at <= $1 and (lease_until is null or lease_until <= $1) \
               order by due_at limit $3 {lock}) \
             returning id, tenant_id, kind, job_key, payload, due_at, attempts"
        );
        let rows: Vec<JobRow> = with_db!(self.writer(), |pool| sqlx::query_as(&sql)
            .bind(now)
            .bind(now.saturating_add(lease_ms))
            .bind(limit)
            .fetch_all(pool)
            .await)?;
        let mut jobs: Vec<Job> = rows.into_iter().map(JobRow::into_job).collect();
        // `returning` keeps no order.
        jobs.sort_by(|a, b| a.due_at.cmp(&b.due_at).then_with(|| a.id.cmp(&b.id)));
        Ok(jobs)
    }

    /// Ends a job that ran: deletes it, unless it was scheduled again since the
    /// claim (a recurring job moves itself forward) or claimed again after its
    /// lease lapsed (the later claim finishes it). Returns whether it was deleted.
    pub async fn complete_job(&self, job: &Job) -> CoreResult<bool> {
        let sql = format!("delete from jobs where {THIS_CLAIM}");
        let deleted = with_db!(self.writer(), |pool| sqlx::query(&sql)
            .bind(&job.id)
            .bind(job.due_at)
            .bind(job.attempts + 1)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(deleted > 0)
    }

    /// Records that a run of `job` failed with `error`. With `retry_at` (unix ms)
    /// the job is freed and falls due again then, its attempts kept; without, its
    /// attempts are spent and it is deleted (and logged). Nothing happens when the
    /// job was scheduled or claimed again since this claim. Returns whether the
    /// job was changed.
    pub async fn fail_job(&self, job: &Job, error: &str, retry_at: Option<i64>) -> CoreResult<bool> {
        let error = truncated(error);
        let changed = match retry_at {
            Some(at) => {
                let sql =
                    format!("update jobs set last_error = $4, lease_until = null, due_at = $5 where {THIS_CLAIM}");
                with_db!(self.writer(), |pool| sqlx::query(&sql)
                    .bind(&job.id)
                    .bind(job.due_at)
                    .bind(job.attempts + 1)
                    .bind(&error)
                    .bind(at)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected()))?
            }
            None => {
                let sql = format!("delete from jobs where {THIS_CLAIM}");
                let deleted = with_db!(self.writer(), |pool| sqlx::query(&sql)
                    .bind(&job.id)
                    .bind(job.due_at)
                    .bind(job.attempts + 1)
                    .execute(pool)
                    .await
                    .map(|r| r.rows_affected()))?;
                if deleted > 0 {
                    // Kind and key only: payloads may carry what logs must not.
                    tracing::warn!(
                        kind = %job.kind,
                        key = %job.key,
                        tenant_id = job.tenant_id.as_ref().map_or("-", TenantId::as_str),
                        attempts = job.attempts + 1,
                        %error,
                        "a job failed on its last attempt and was dropped"
                    );
                }
                deleted
            }
        };
        Ok(changed > 0)
    }

    /// Puts a claimed job back without counting the run: it falls due again at
    /// `due_at` ([`PARKED`] to keep it until someone schedules it). For work that
    /// cannot be done by this runner yet. Nothing happens when the job was
    /// scheduled or claimed again since this claim.
    pub async fn defer_job(&self, job: &Job, due_at: i64) -> CoreResult<bool> {
        let sql =
            format!("update jobs set lease_until = null, attempts = attempts - 1, due_at = $4 where {THIS_CLAIM}");
        let changed = with_db!(self.writer(), |pool| sqlx::query(&sql)
            .bind(&job.id)
            .bind(job.due_at)
            .bind(job.attempts + 1)
            .bind(due_at)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(changed > 0)
    }

    /// [`schedule`] in a transaction of its own, for callers that have none.
    pub async fn schedule_job(
        &self,
        tenant_id: Option<&TenantId>,
        kind: JobKind,
        key: &str,
        due_at: i64,
        payload: &serde_json::Value,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        schedule(&mut tx, tenant_id, kind, key, due_at, payload).await?;
        tx.commit().await
    }

    /// Adds the instance-wide job `(kind, key)` due at `due_at` unless it exists
    /// (whatever its due time): how recurring jobs are set up at start. Returns
    /// whether it was added.
    pub async fn ensure_job(&self, kind: JobKind, key: &str, due_at: i64) -> CoreResult<bool> {
        let mut tx = self.db().begin().await?;
        let added = with_tx!(&mut tx, |conn| sqlx::query(
            "insert into jobs (id, tenant_id, kind, job_key, payload, due_at, created_at) \
             values ($1, null, $2, $3, '{}', $4, $5) on conflict (kind, job_key) do nothing"
        )
        .bind(uuid::Uuid::now_v7().to_string())
        .bind(kind.as_str())
        .bind(key)
        .bind(due_at)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(added > 0)
    }

    /// Frees every lease. Only for SQLite at start: one process owns the file, so
    /// leases still held belong to a process that is gone, and their jobs need not
    /// wait for the leases to lapse. Returns how many were freed.
    pub async fn release_job_leases(&self) -> CoreResult<u64> {
        let freed = with_db!(self.writer(), |pool| sqlx::query(
            "update jobs set lease_until = null where lease_until is not null"
        )
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(freed)
    }

    /// The job `(kind, key)` as stored, if any, with its lease (for tests and
    /// diagnostics): `(due_at, lease_until, attempts, last_error)`.
    pub async fn job_state(&self, kind: JobKind, key: &str) -> CoreResult<Option<JobState>> {
        let row: Option<(i64, Option<i64>, i64, Option<String>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select due_at, lease_until, attempts, last_error from jobs where kind = $1 and job_key = $2"
        )
        .bind(kind.as_str())
        .bind(key)
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|(due_at, lease_until, attempts, last_error)| JobState {
            due_at,
            lease_until,
            attempts,
            last_error,
        }))
    }
}

/// A stored job's schedule, as [`Services::job_state`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobState {
    /// When it is due (unix ms; [`PARKED`] when parked).
    pub due_at: i64,
    /// Until when a runner holds it, if one does (or did and died).
    pub lease_until: Option<i64>,
    /// Claims so far (a new schedule starts at 0).
    pub attempts: i64,
    /// Why the last failed run failed.
    pub last_error: Option<String>,
}
