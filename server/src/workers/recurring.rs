//! Recurring jobs: instance-wide work that falls due again and again (retention
//! hourly, the presence sweep every 30 s, the ends of quiet recorded sessions
//! and the media cleanup every minute), and what the runner sets up at start.
//!
//! A recurring job is one row of `jobs`, added at start if missing
//! (`Services::ensure_job`), so instances sharing a database share it: each run
//! happens once, on whichever instance claims it. Its handler schedules the next
//! run *before* doing the work, so a run that fails or dies still leaves the next
//! one in place (the runner's retry does not apply: the job was moved on, and a
//! failed run is followed by the next regular one).

use std::time::Duration;

use rapport_core::{
    error::CoreResult,
    jobs::{Job, JobKind},
    time::{duration_ms, now_ms},
    Services,
};

use super::Handlers;

/// The key of the one retention job.
pub const RETENTION_KEY: &str = "instance";
/// The key of the one presence sweep job.
pub const PRESENCE_KEY: &str = "instance";
/// How often agents' stale presence is closed.
pub const PRESENCE_EVERY: Duration = Duration::from_secs(30);
/// The key of the one job that ends quiet recorded sessions.
pub const RECORDING_ENDS_KEY: &str = "instance";
/// How often quiet recorded sessions are ended: a session ends at most this
/// long after its 30 quiet minutes.
pub const RECORDING_ENDS_EVERY: Duration = Duration::from_secs(60);
/// Most sessions ended in one transaction-sized step; a run goes on until
/// none is due.
const RECORDING_ENDS_BATCH: i64 = 200;

/// Adds the recurring jobs this instance is configured for, due now unless they
/// exist, and, with an SMTP server, gives every pending mail a due job. Errors
/// are logged: the runner goes on with what exists.
pub async fn set_up(services: &Services, handlers: &Handlers) {
    let now = now_ms();
    // Retention runs even with `RAPPORT_RETENTION=0`: recordings follow each
    // workspace's own retention whatever the instance keeps.
    let mut recurring = vec![
        (JobKind::RecordingEnds, RECORDING_ENDS_KEY),
        (JobKind::Retention, RETENTION_KEY),
        (JobKind::MediaCleanup, rapport_core::media_store::cleanup::CLEANUP_KEY),
    ];
    if handlers.presence_timeout_ms.is_some() {
        recurring.push((JobKind::Presence, PRESENCE_KEY));
    }
    for (kind, key) in recurring {
        if let Err(e) = services.ensure_job(kind, key, now).await {
            tracing::error!(%kind, error = %e, "cannot set up a recurring job");
        }
    }
    if handlers.mail.is_some() {
        match services.schedule_pending_mail().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(mails = n, "pending mail from before is due again"),
            Err(e) => tracing::error!(error = %e, "cannot schedule pending mail"),
        }
    } else {
        tracing::info!("no RAPPORT_SMTP_URL: mail is kept in the outbox (Settings → Mail outbox)");
    }
}

/// Moves the recurring `job`, of `kind`, to `every` from now: its next run.
pub async fn next_run(services: &Services, job: &Job, kind: JobKind, every: Duration) -> CoreResult<()> {
    services
        .schedule_job(
            job.tenant_id.as_ref(),
            kind,
            &job.key,
            now_ms() + duration_ms(every),
            &serde_json::json!({}),
        )
        .await
}

/// The presence sweep: closes the presence of agents whose dashboard stopped
/// sending heartbeats, then comes back in 30 s. Without a timeout configured
/// here the job is dropped.
pub async fn sweep_presence(services: &Services, timeout_ms: Option<i64>, job: &Job) -> CoreResult<()> {
    let Some(timeout_ms) = timeout_ms else {
        return Ok(());
    };
    next_run(services, job, JobKind::Presence, PRESENCE_EVERY).await?;
    services.close_stale_presence(timeout_ms).await?;
    Ok(())
}

/// Ends the recorded sessions that went quiet (see
/// `rapport_core::recordings::ends`), and the script co-browses whose agent is
/// gone (`rapport_core::cobrowsing::script`), then comes back in a minute.
pub async fn end_quiet_recordings(services: &Services, job: &Job) -> CoreResult<()> {
    next_run(services, job, JobKind::RecordingEnds, RECORDING_ENDS_EVERY).await?;
    // Each sweep on its own: one failing does not hold the other up.
    match services.end_abandoned_cobrowses(now_ms()).await {
        Ok(0) => {}
        Ok(ended) => tracing::info!(cobrowses = ended, "ended co-browses whose agent left"),
        Err(e) => tracing::error!(error = %e, "cannot end co-browses whose agent left"),
    }
    loop {
        let ended = services.end_quiet_recordings(now_ms(), RECORDING_ENDS_BATCH).await?;
        if ended < RECORDING_ENDS_BATCH.unsigned_abs() {
            return Ok(());
        }
    }
}
