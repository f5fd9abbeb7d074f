//! The media cleanup job ([`JobKind::MediaCleanup`], every minute, one for all
//! instances): deletes the objects whose rows are gone, and sweeps the
//! uploads of one past hour for objects no row names.
//!
//! - **Garbage.** Deleting a row queues its object's key in `media_garbage`
//!   in the same transaction (see [`super`]). Each run deletes the queued
//!   objects, then their queue rows; a run that dies in between leaves them
//!   queued, and deleting an object twice is harmless.
//! - **The sweep.** A write that dies between storing its object and
//!   committing its row leaves an object nothing names. Keys carry the hour
//!   they were written, so each run sweeps the next hour not yet swept that
//!   ended at least [`SWEEP_GRACE`] ago (every write of it has committed or
//!   failed by then): it lists that hour's objects and deletes those no row
//!   names. The job's payload keeps the last hour swept; the first run starts
//!   at the latest hour it may sweep.

use std::{collections::HashSet, time::Duration};

use serde::{Deserialize, Serialize};

use super::{hour_part, MediaKind};
use crate::{
    db::placeholders,
    error::CoreResult,
    jobs::{schedule_payload, Job, JobKind, Payload},
    time::{duration_ms, now_ms},
    with_db, Services,
};

/// The key of the one media cleanup job.
pub const CLEANUP_KEY: &str = "instance";
/// How often the job runs: a deleted row's object goes within about this long.
pub const CLEANUP_EVERY: Duration = Duration::from_secs(60);
/// How long after an hour ends its uploads are swept.
pub const SWEEP_GRACE: Duration = Duration::from_secs(3600);
/// Objects deleted per step (and keys looked up per statement).
const BATCH: usize = 200;
/// How long one run deletes garbage before it leaves the rest to the next.
const BUDGET: Duration = Duration::from_secs(20);
const HOUR_MS: i64 = 3_600_000;

/// The media cleanup job's payload: the start (ms) of the last hour swept.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MediaCleanup {
    /// The start of the last hour whose uploads were swept.
    #[serde(default)]
    pub swept_through: Option<i64>,
}

impl Payload for MediaCleanup {
    const KIND: JobKind = JobKind::MediaCleanup;
}

/// What one run of the job did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CleanedMedia {
    /// Objects deleted because their rows were deleted.
    pub garbage: u64,
    /// Objects deleted because no row named them (writes that died).
    pub orphans: u64,
}

impl Services {
    /// Runs the media cleanup job: schedules the next run (before the work,
    /// so that a run that fails still leaves one), deletes the queued
    /// garbage, and sweeps one past hour.
    pub async fn run_media_cleanup(&self, job: &Job) -> CoreResult<CleanedMedia> {
        let state: MediaCleanup = job.read().unwrap_or_default();
        let now = now_ms();
        let latest = latest_sweepable_hour(now);
        let next = state.swept_through.map_or(latest, |h| h + HOUR_MS);
        let sweep = (next <= latest).then_some(next);
        let mut tx = self.db().begin().await?;
        let moved_on = MediaCleanup {
            swept_through: sweep.or(state.swept_through),
        };
        schedule_payload(&mut tx, None, &job.key, now + duration_ms(CLEANUP_EVERY), &moved_on).await?;
        tx.commit().await?;

        let started = std::time::Instant::now();
        let mut cleaned = CleanedMedia::default();
        loop {
            let n = self.collect_media_garbage(BATCH).await?;
            cleaned.garbage += n;
            if n < BATCH as u64 || started.elapsed() >= BUDGET {
                break;
            }
        }
        if let Some(hour) = sweep {
            cleaned.orphans = self.sweep_media_hour(hour).await?;
            if cleaned.orphans > 0 {
                tracing::warn!(
                    objects = cleaned.orphans,
                    hour = %hour_part(hour),
                    "deleted media objects no row named (writes that died after storing them)"
                );
            }
        }
        Ok(cleaned)
    }

    /// After a write that stored `key` failed: deletes the object, unless a
    /// row names it after all (a commit whose answer was lost on the way).
    /// When the database cannot say, the object is left to the hourly sweep.
    pub async fn forget_object(&self, kind: MediaKind, key: &str) {
        let sql = format!("select blob_key from {} where blob_key = $1", kind.table());
        let named: Result<Option<String>, sqlx::Error> = with_db!(self.db(), |pool| sqlx::query_scalar(&sql)
            .bind(key)
            .fetch_optional(pool)
            .await);
        match named {
            Ok(None) => self.media().forget(key).await,
            Ok(Some(_)) => {}
            Err(e) => tracing::warn!(error = %e, "an object of a failed write is left to the hourly sweep"),
        }
    }

    /// Deletes up to `batch` objects queued in `media_garbage`, oldest first,
    /// and then their queue rows; returns how many.
    pub async fn collect_media_garbage(&self, batch: usize) -> CoreResult<u64> {
        let keys: Vec<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select key from media_garbage order by queued_at, key limit $1"
        )
        .bind(i64::try_from(batch).unwrap_or(i64::MAX))
        .fetch_all(pool)
        .await)?;
        if keys.is_empty() {
            return Ok(0);
        }
        for key in &keys {
            self.media().delete(key).await?;
        }
        let sql = format!(
            "delete from media_garbage where key in ({})",
            placeholders(1, keys.len())
        );
        with_db!(self.writer(), |pool| {
            let mut q = sqlx::query(&sql);
            for key in &keys {
                q = q.bind(key);
            }
            q.execute(pool).await.map(|r| r.rows_affected())
        })?;
        Ok(keys.len() as u64)
    }

    /// Deletes the objects written in the hour starting at `hour_start` (ms)
    /// that no row names; returns how many. Only for an hour whose writes have
    /// all committed or failed: one that ended [`SWEEP_GRACE`] ago.
    pub async fn sweep_media_hour(&self, hour_start: i64) -> CoreResult<u64> {
        let hour = hour_part(hour_start);
        let mut deleted = 0;
        for kind in MediaKind::ALL {
            let listed = self.media().list(Some(&format!("{}/{hour}", kind.prefix()))).await?;
            for group in listed.chunks(BATCH) {
                let sql = format!(
                    "select blob_key from {} where blob_key in ({})",
                    kind.table(),
                    placeholders(1, group.len())
                );
                let named: Vec<String> = with_db!(self.db(), |pool| {
                    let mut q = sqlx::query_scalar(&sql);
                    for object in group {
                        q = q.bind(&object.key);
                    }
                    q.fetch_all(pool).await
                })?;
                let named: HashSet<String> = named.into_iter().collect();
                for object in group.iter().filter(|o| !named.contains(&o.key)) {
                    self.media().delete(&object.key).await?;
                    deleted += 1;
                }
            }
        }
        Ok(deleted)
    }
}

/// The start of the latest hour that may be swept at `now`: it ended
/// [`SWEEP_GRACE`] ago or earlier.
fn latest_sweepable_hour(now: i64) -> i64 {
    let ended_by = now - duration_ms(SWEEP_GRACE);
    (ended_by.div_euclid(HOUR_MS) - 1) * HOUR_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_is_swept_once_it_ended_an_hour_ago() {
        let h = 1_795_968_000_000; // 2026-11-29 16:00 UTC
        assert_eq!(latest_sweepable_hour(h + 2 * HOUR_MS), h);
        assert_eq!(latest_sweepable_hour(h + 2 * HOUR_MS - 1), h - HOUR_MS);
        assert_eq!(latest_sweepable_hour(h + 2 * HOUR_MS + 59 * 60_000), h);
    }
}
