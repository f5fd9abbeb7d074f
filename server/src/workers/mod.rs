//! The job runner: one task per instance that runs every durable job of the
//! `jobs` table (`rapport_core::jobs`): the engines' timers (`NO_ANSWER`, queue
//! waits, SLA deadlines, watchdog windows), outgoing mail, retention and the
//! presence sweep.
//!
//! Every [`RunnerSettings::poll`] (200 ms) it claims due jobs, as many as it has
//! free slots ([`RunnerSettings::concurrency`]), each under a lease, and runs each
//! in a task of its own; a full claim is followed by another at once. A job that
//! ran is completed (deleted, unless its handler scheduled it again); one that
//! failed is retried on [`RunnerSettings::backoff`] and dropped, with a warning,
//! once its attempts are spent. A handler that panics counts as failed. A job
//! whose lease lapses (the instance died mid-run) is claimed again, by this or
//! another instance; on SQLite, which has one instance, the leases left by a dead
//! process are freed at start. So a timer fires once it is due, within about the
//! poll interval, across restarts, and once across instances (PostgreSQL's
//! `FOR UPDATE SKIP LOCKED`); a handler that dies mid-run runs again.
//!
//! Jobs are dispatched by kind in one place, `Services::run_job`
//! (`rapport_core::usecases::jobs`): the engines' timers in the core, and this
//! server's own kinds through [`dispatch`]'s `InstanceJobs`: mail to
//! [`crate::mail`], retention to [`retention`], the presence sweep, the
//! recordings' ends and the probe to [`recurring`].
//!
//! What stays outside:
//! - **The webhook worker** (`crate::webhooks`) keeps its own claim on
//!   `webhook_deliveries`, because what decides which delivery may go next lives
//!   there and not in a due time: a claim takes only the oldest unfinished delivery
//!   of each (endpoint, customer) ordering key, so one customer's events reach an
//!   endpoint in order; each endpoint's circuit (on `webhook_endpoints`) holds a
//!   failing endpoint as a whole, with one probe once it reopens, without touching
//!   its queued rows; due endpoints are read least recently served first, each with
//!   at most an eighth of the slots in flight and each tenant a quarter, counting
//!   what the worker still has in flight; and a delivery whose lease lapsed goes
//!   back to its queue as the same attempt. A job per delivery would copy the due
//!   time, lease and attempts the delivery row already keeps, and a claim in due
//!   order could neither keep the per-customer order nor pass over a held
//!   endpoint's backlog at a cost independent of its size.
//! - The rate limiters' pruning (`serve.rs`) works on this instance's memory, not
//!   on shared state, so it stays a plain interval.
//! - The live relay (`serve.rs`) holds a `LISTEN` connection open; it is not work
//!   that falls due.

pub mod recurring;
pub mod retention;

use std::{panic::AssertUnwindSafe, sync::Arc, time::Duration};

use futures_util::FutureExt;
use rapport_core::{
    backoff::Backoff,
    db::Backend,
    error::{CoreError, CoreResult},
    jobs::Job,
    time::{duration_ms, now_ms},
    usecases::jobs::InstanceJobs,
    Services,
};
use tokio::{
    sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore},
    task::JoinSet,
};

use crate::mail::MailSettings;

/// Most jobs claimed in one statement.
const CLAIM_BATCH: usize = 32;
/// How long jobs in flight may take to finish once the runner is asked to stop;
/// those still running then are dropped and keep their lease (they run again).
const GRACE: Duration = Duration::from_secs(10);

/// How the runner claims and retries.
#[derive(Debug, Clone)]
pub struct RunnerSettings {
    /// Jobs run at once.
    pub concurrency: usize,
    /// How long a claim lasts; past it (the instance died, or the run is stuck)
    /// the job may be claimed again. Handlers finish well within it.
    pub lease: Duration,
    /// How often the runner looks for due jobs: a timer fires at most about this
    /// long after it is due, when a slot is free.
    pub poll: Duration,
    /// Waits before the 2nd, 3rd, … run of a failing job; then it is dropped.
    pub backoff: Backoff,
}

impl Default for RunnerSettings {
    /// 16 at once, 60 s leases, a look every 200 ms; a failing job is retried
    /// after 1 s, 10 s, 1 min, 5 min and 30 min (6 runs in all).
    fn default() -> Self {
        let s = Duration::from_secs;
        RunnerSettings {
            concurrency: 16,
            lease: s(60),
            poll: Duration::from_millis(200),
            backoff: Backoff::new(vec![s(1), s(10), s(60), s(300), s(1800)]),
        }
    }
}

/// A run of a [`JobKind::Probe`] job, as the runner's observer hears it.
#[derive(Debug, Clone)]
pub struct Fired {
    /// The job as claimed.
    pub job: Job,
    /// When its handler ran (unix ms).
    pub at: i64,
    /// Whether the run failed on purpose (the payload's `fail`).
    pub failed: bool,
}

/// What the handlers need besides the database. A recurring job this instance
/// is not configured for is dropped when it falls due; an instance configured for
/// it adds it again at its start (instances sharing a database share settings).
#[derive(Clone, Default)]
pub struct Handlers {
    /// Where mail goes; `None` keeps it in the outbox (mail jobs are parked).
    pub mail: Option<MailSettings>,
    /// How long finished work is kept; `None` keeps it forever.
    pub retention: Option<Duration>,
    /// After how long without a heartbeat an agent's presence ends; `None`: no
    /// sweep from this instance.
    pub presence_timeout_ms: Option<i64>,
    /// Hears every run of a probe job (benchmarks and tests).
    pub probe: Option<mpsc::UnboundedSender<Fired>>,
}

/// Starts the runner. It stops claiming when `shutdown` turns true, lets jobs in
/// flight finish (up to 10 s), and ends.
pub fn spawn(
    services: Services,
    handlers: Handlers,
    settings: RunnerSettings,
    shutdown: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(run(services, Arc::new(handlers), settings, shutdown))
}

async fn run(
    services: Services,
    handlers: Arc<Handlers>,
    settings: RunnerSettings,
    mut shutdown: watch::Receiver<bool>,
) {
    if services.db().backend() == Backend::Sqlite {
        // One process owns a SQLite file: leases still held belong to a process
        // that is gone, and their jobs need not wait for them to lapse.
        match services.release_job_leases().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(jobs = n, "released jobs claimed before a restart"),
            Err(e) => tracing::error!(error = %e, "cannot release earlier job claims"),
        }
    }
    recurring::set_up(&services, &handlers).await;
    let concurrency = settings.concurrency.max(1);
    let lease_ms = duration_ms(settings.lease);
    let slots = Arc::new(Semaphore::new(concurrency));
    let mut running = JoinSet::new();
    let settings = Arc::new(settings);
    while !*shutdown.borrow() {
        // Reap finished runs (their outcome is recorded by the run itself).
        while running.try_join_next().is_some() {}
        let free = slots.available_permits().min(CLAIM_BATCH);
        let claimed = if free == 0 {
            Vec::new()
        } else {
            match services.claim_jobs(i64::try_from(free).unwrap_or(1), lease_ms).await {
                Ok(jobs) => jobs,
                Err(e) => {
                    tracing::error!(error = %e, "cannot claim jobs");
                    Vec::new()
                }
            }
        };
        let full_batch = free > 0 && claimed.len() == free;
        for job in claimed {
            let permit = slots
                .clone()
                .try_acquire_owned()
                .expect("a claim takes no more jobs than there are free slots");
            running.spawn(run_one(
                services.clone(),
                handlers.clone(),
                settings.clone(),
                job,
                permit,
            ));
        }
        if full_batch {
            // More may be due right away.
            continue;
        }
        tokio::select! {
            _ = tokio::time::sleep(settings.poll) => {}
            _ = shutdown.changed() => {}
        }
    }
    let finished = tokio::time::timeout(GRACE, async { while running.join_next().await.is_some() {} }).await;
    if finished.is_err() {
        tracing::warn!(
            jobs = running.len(),
            "jobs still running at shutdown were stopped; they run again later"
        );
        running.abort_all();
    }
}

/// Runs one claimed job and records how it ended.
async fn run_one(
    services: Services,
    handlers: Arc<Handlers>,
    settings: Arc<RunnerSettings>,
    job: Job,
    _slot: OwnedSemaphorePermit,
) {
    let attempt = job.attempts + 1;
    let max_attempts = i64::try_from(settings.backoff.attempts()).unwrap_or(i64::MAX);
    let outcome = if attempt > max_attempts {
        // Its earlier runs never finished (each died with its instance, or hung
        // past its lease): do not let it take instances down for ever.
        Err(format!("{} runs never finished", job.attempts))
    } else {
        match AssertUnwindSafe(dispatch(&services, &handlers, &job))
            .catch_unwind()
            .await
        {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err("the handler panicked".to_string()),
        }
    };
    let recorded = match &outcome {
        Ok(()) => services.complete_job(&job).await,
        Err(error) => {
            let retry_at = settings.backoff.after(attempt).map(|wait| now_ms() + duration_ms(wait));
            if retry_at.is_some() {
                tracing::warn!(kind = %job.kind, key = %job.key, attempt, %error, "a job failed; it runs again later");
            }
            services.fail_job(&job, error, retry_at).await
        }
    };
    if let Err(e) = recorded {
        // The lease runs out and the job runs again.
        tracing::error!(kind = %job.kind, key = %job.key, error = %e, "cannot record how a job ended");
    }
}

/// Runs `job` by its kind (`rapport_core::usecases::jobs` is the one place
/// each kind is handled).
pub async fn dispatch(services: &Services, handlers: &Handlers, job: &Job) -> CoreResult<()> {
    services.run_job(job, &Instance { services, handlers }).await
}

/// What this server runs itself, with its own settings.
struct Instance<'a> {
    services: &'a Services,
    handlers: &'a Handlers,
}

impl InstanceJobs for Instance<'_> {
    async fn mail(&self, job: &Job) -> CoreResult<()> {
        crate::mail::deliver(self.services, self.handlers.mail.as_ref(), job).await
    }

    async fn retention(&self, job: &Job) -> CoreResult<()> {
        retention::run(self.services, self.handlers.retention, job).await
    }

    async fn presence(&self, job: &Job) -> CoreResult<()> {
        recurring::sweep_presence(self.services, self.handlers.presence_timeout_ms, job).await
    }

    async fn recording_ends(&self, job: &Job) -> CoreResult<()> {
        recurring::end_quiet_recordings(self.services, job).await
    }

    fn probe(&self, job: &Job) -> CoreResult<()> {
        probe(self.handlers, job)
    }
}

/// A probe job: tells the observer when it ran; fails its first `fail` runs.
fn probe(handlers: &Handlers, job: &Job) -> CoreResult<()> {
    let at = now_ms();
    let fail = job.payload.get("fail").and_then(serde_json::Value::as_i64).unwrap_or(0);
    let failed = job.attempts < fail;
    if let Some(observer) = &handlers.probe {
        let _ = observer.send(Fired {
            job: job.clone(),
            at,
            failed,
        });
    }
    if failed {
        return Err(CoreError::Internal("the probe was asked to fail".into()));
    }
    Ok(())
}
