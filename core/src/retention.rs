//! Retention: what Rapport deletes once it is older than the retention period
//! (`RAPPORT_RETENTION`, 30 days by default).
//!
//! - webhook deliveries that succeeded or failed before the cutoff, with their
//!   attempts (the delivery log);
//! - events (the outbox) that no delivery refers to any more and that were written
//!   before the cutoff;
//! - mail that was sent, or failed for good, before the cutoff;
//! - the engines' history: routing decisions (the match log) made, SLA clocks
//!   ended, and notifications read before the cutoff;
//! - recorded sessions, with their events, once older than their workspace's
//!   recording retention (`retentionDays` of the recording settings);
//! - conference recordings, once older than the workspace's
//!   `conferenceRetentionDays` (the same settings).
//!
//! Nothing unfinished is deleted: a delivery still pending (an endpoint disabled
//! for a month, say) keeps its event, so does an endpoint that fell behind in
//! the event stream for the events it has yet to catch up on, and mail still
//! waiting for an SMTP server stays in the outbox. Each step deletes one bounded batch in its own short
//! transaction, so pruning a large history never holds the writer for long and
//! interleaves with the requests' writes.
//!
//! The server runs it as a recurring job of the job runner
//! ([`crate::jobs::JobKind::Retention`], hourly), each run bounded in time
//! ([`Services::prune_until`]) so that it ends well within its lease.

use crate::{error::CoreResult, with_tx, Services};

/// Rows one batch deletes at most (a delivery's attempts go with it).
pub const BATCH: i64 = 500;

/// What one step deleted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Pruned {
    /// Finished webhook deliveries (their attempts went with them).
    pub deliveries: u64,
    /// Events no delivery needed any more.
    pub events: u64,
    /// Sent or failed mail.
    pub mails: u64,
    /// Routing decisions, ended SLA clocks and read notifications.
    pub engine_history: u64,
    /// Recorded sessions past their workspace's recording retention, with
    /// their events.
    pub recordings: u64,
    /// Conference recordings past their workspace's `conferenceRetentionDays`,
    /// with their chunks.
    pub conference_recordings: u64,
}

impl Pruned {
    /// Rows deleted in all.
    pub fn total(&self) -> u64 {
        self.deliveries + self.events + self.mails + self.engine_history + self.recordings + self.conference_recordings
    }
}

/// Conference recordings one batch deletes at most.
const CONFERENCE_RECORDING_BATCH: i64 = 4;

/// The engines' history that retention deletes: `(table, the column that says
/// when a row finished)`; a row whose column is null has not finished.
const ENGINE_HISTORY: [(&str, &str); 3] = [
    ("routing_decisions", "at"),
    ("sla_clocks", "ended_at"),
    ("notifications", "read_at"),
];

/// Where the sweep over old events goes on: events older than the cutoff are read
/// in `(created_at, id)` order, a batch at a time, so events that must stay (a
/// pending delivery still needs them) are passed over rather than read again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct EventCursor(Option<(i64, String)>);

impl Services {
    /// Deletes up to `batch` deliveries that finished before `before` (unix ms),
    /// with their attempts. Returns how many.
    pub(crate) async fn prune_deliveries(&self, before: i64, batch: i64) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        let deleted = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from webhook_deliveries where seq in (select seq from webhook_deliveries \
             where state in ('succeeded', 'failed') and completed_at < $1 order by completed_at limit $2)"
        )
        .bind(before)
        .bind(batch)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(deleted)
    }

    /// Reads up to `batch` events written before `before`, after `cursor`, and
    /// deletes those no delivery refers to. Returns how many it deleted, and where
    /// the next batch starts (`None` once the old events are all read).
    pub(crate) async fn prune_events(
        &self,
        before: i64,
        batch: i64,
        cursor: &EventCursor,
    ) -> CoreResult<(u64, Option<EventCursor>)> {
        let (after_at, after_id) = cursor.0.clone().unwrap_or((i64::MIN, String::new()));
        let mut tx = self.db().begin().await?;
        let read: Vec<(String, i64)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select id, created_at from events where created_at < $1 \
             and (created_at > $2 or (created_at = $2 and id > $3)) order by created_at, id limit $4"
        )
        .bind(before)
        .bind(after_at)
        .bind(&after_id)
        .bind(batch)
        .fetch_all(conn)
        .await)?;
        let mut deleted = 0;
        if !read.is_empty() {
            // An endpoint behind in the stream (it failed, see
            // `webhooks::deliveries::catch_up`) still owes the events after
            // its mark, outside its gaps: they stay until it catches up.
            let pos = crate::webhooks::deliveries::catch_up_position(self.db().backend());
            let sql = format!(
                "delete from events where id in ({}) and not fanout_pending \
                 and not exists (select 1 from webhook_deliveries d where d.event_id = events.id) \
                 and (directed or not exists (select 1 from webhook_endpoints w \
                   where w.tenant_id = events.tenant_id and {}))",
                crate::db::placeholders(1, read.len()),
                crate::webhooks::deliveries::owed_by_endpoint_behind(pos),
            );
            deleted = with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql);
                for (id, _) in &read {
                    q = q.bind(id);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        tx.commit().await?;
        let next = (i64::try_from(read.len()).unwrap_or(i64::MAX) >= batch)
            .then(|| read.last().map(|(id, at)| EventCursor(Some((*at, id.clone())))))
            .flatten();
        Ok((deleted, next))
    }

    /// Deletes up to `batch` mails sent, or failed for good, before `before`.
    pub(crate) async fn prune_mail(&self, before: i64, batch: i64) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        // A sent or failed mail's `next_attempt_at` is when it was sent or gave up.
        let deleted = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from mail_outbox where id in (select id from mail_outbox \
             where status in ('SENT', 'FAILED') and next_attempt_at < $1 order by next_attempt_at limit $2)"
        )
        .bind(before)
        .bind(batch)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(deleted)
    }

    /// Deletes up to `batch` rows of `table` (one of [`ENGINE_HISTORY`]) whose
    /// `finished` column is before `before`.
    async fn prune_history(&self, table: &str, finished: &str, before: i64, batch: i64) -> CoreResult<u64> {
        let sql = format!(
            "delete from {table} where id in (select id from {table} \
             where {finished} < $1 order by {finished} limit $2)"
        );
        let mut tx = self.db().begin().await?;
        let deleted = with_tx!(&mut tx, |conn| sqlx::query(&sql)
            .bind(before)
            .bind(batch)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(deleted)
    }

    /// Prunes everything older than `before`, one batch per transaction, calling
    /// `pause` between batches (the server sleeps there, so requests' writes go
    /// first). Returns what it deleted.
    pub async fn prune_before<F, Fut>(&self, before: i64, batch: i64, pause: F) -> CoreResult<Pruned>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        Ok(self.prune_until(before, batch, pause, None).await?.0)
    }

    /// [`Services::prune_before`], but stops at the first batch boundary after
    /// `deadline`, if one is given. Returns what it deleted and whether it
    /// finished (`false`: stopped by the deadline with old work left). A run that
    /// stopped early starts over next time; what it deleted stays deleted.
    pub async fn prune_until<F, Fut>(
        &self,
        before: i64,
        batch: i64,
        mut pause: F,
        deadline: Option<std::time::Instant>,
    ) -> CoreResult<(Pruned, bool)>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let out_of_time = || deadline.is_some_and(|d| std::time::Instant::now() >= d);
        let mut pruned = Pruned::default();
        let step = |n: &mut u64, deleted| -> bool {
            *n += deleted;
            i64::try_from(deleted).unwrap_or(i64::MAX) >= batch
        };
        // Each table: batches until one comes back short, pausing between
        // them, and giving up (to come back later) at the deadline.
        macro_rules! drain {
            ($total:expr, $prune:expr) => {
                while step(&mut $total, $prune.await?) {
                    if out_of_time() {
                        return Ok((pruned, false));
                    }
                    pause().await;
                }
            };
        }
        drain!(pruned.deliveries, self.prune_deliveries(before, batch));
        // Events go by a cursor: an event some delivery still needs is kept.
        let mut cursor = EventCursor::default();
        loop {
            let (n, next) = self.prune_events(before, batch, &cursor).await?;
            pruned.events += n;
            match next {
                Some(next) => cursor = next,
                None => break,
            }
            if out_of_time() {
                return Ok((pruned, false));
            }
            pause().await;
        }
        drain!(pruned.mails, self.prune_mail(before, batch));
        for (table, finished) in ENGINE_HISTORY {
            drain!(
                pruned.engine_history,
                self.prune_history(table, finished, before, batch)
            );
        }
        // Recordings follow each workspace's own retention (days), not `before`.
        let now = crate::time::now_ms();
        drain!(pruned.recordings, self.prune_recordings(now, batch));
        // A handful of rows per tenant and day: one statement.
        self.prune_tenant_usage(now).await?;
        // A conference recording is up to hundreds of megabytes of chunks: a
        // few at a time keep each transaction short.
        drain!(
            pruned.conference_recordings,
            self.prune_conference_recordings(now, CONFERENCE_RECORDING_BATCH.min(batch))
        );
        Ok((pruned, true))
    }
}
