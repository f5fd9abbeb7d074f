//! The retention worker: once at start and then every hour, deletes what is
//! older than `RAPPORT_RETENTION` (see `rapport_core::retention`), a bounded batch
//! per transaction with a pause between batches, so the requests' writes go first.

use std::time::Duration;

use rapport_core::{retention::BATCH, time::now_ms, Services};
use tokio::sync::watch;

/// How often the worker prunes.
const EVERY: Duration = Duration::from_secs(3600);
/// Pause between two batches: the writer is free for other work meanwhile.
const PAUSE: Duration = Duration::from_millis(20);

/// Starts the worker; `period` is how long finished work is kept. It ends when
/// `shutdown` turns true.
pub fn spawn(services: Services, period: Duration, mut shutdown: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let period_ms = i64::try_from(period.as_millis()).unwrap_or(i64::MAX);
        loop {
            let before = now_ms().saturating_sub(period_ms);
            let pruning = services.prune_before(before, BATCH, || tokio::time::sleep(PAUSE));
            tokio::select! {
                result = pruning => match result {
                    Ok(p) if p.deliveries + p.events + p.mails > 0 => tracing::info!(
                        deliveries = p.deliveries,
                        events = p.events,
                        mails = p.mails,
                        "pruned work older than the retention period"
                    ),
                    Ok(_) => {}
                    Err(err) => tracing::warn!(error = %err, "pruning old work failed; trying again later"),
                },
                // A batch in progress is one transaction: dropping it rolls it back.
                _ = shutdown.changed() => break,
            }
            tokio::select! {
                _ = tokio::time::sleep(EVERY) => {}
                _ = shutdown.changed() => break,
            }
            if *shutdown.borrow() {
                break;
            }
        }
    })
}
