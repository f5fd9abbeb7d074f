//! Retention as a recurring job of the runner (`JobKind::Retention`): hourly,
//! deletes what is older than `RAPPORT_RETENTION` (see `rapport_core::retention`),
//! a bounded batch per transaction with a pause between batches, so the requests'
//! writes go first. The job is added at the first start (due at once).
//!
//! A run stops after [`BUDGET`], well within the runner's lease, so that another
//! instance never takes over a run still under way; a large backlog is pruned by
//! several runs one after the other.

use std::time::{Duration, Instant};

use rapport_core::{
    error::CoreResult,
    jobs::{Job, JobKind},
    retention::BATCH,
    time::now_ms,
    Services,
};

use super::recurring;

/// How often retention runs.
pub const EVERY: Duration = Duration::from_secs(3600);
/// Pause between two batches: the writer is free for other work meanwhile.
const PAUSE: Duration = Duration::from_millis(20);
/// How long one run prunes before it hands over to the next.
pub const BUDGET: Duration = Duration::from_secs(20);

/// Runs the retention job: `period` is how long finished work is kept (`None`:
/// forever). Recordings follow each workspace's own retention either way.
pub async fn run(services: &Services, period: Option<Duration>, job: &Job) -> CoreResult<()> {
    recurring::next_run(services, job, JobKind::Retention, EVERY).await?;
    let before = match period {
        Some(period) => now_ms().saturating_sub(i64::try_from(period.as_millis()).unwrap_or(i64::MAX)),
        // Nothing is older than the epoch.
        None => 0,
    };
    let (pruned, finished) = services
        .prune_until(
            before,
            BATCH,
            || tokio::time::sleep(PAUSE),
            Some(Instant::now() + BUDGET),
        )
        .await?;
    if pruned.total() > 0 {
        tracing::info!(
            deliveries = pruned.deliveries,
            events = pruned.events,
            mails = pruned.mails,
            engine_history = pruned.engine_history,
            recordings = pruned.recordings,
            finished,
            "pruned work older than the retention period"
        );
    }
    if !finished {
        // More is left: the next run goes on at once.
        recurring::next_run(services, job, JobKind::Retention, Duration::ZERO).await?;
    }
    Ok(())
}
