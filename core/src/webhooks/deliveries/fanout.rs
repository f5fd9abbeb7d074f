//! Fan-out after commit: events marked `fanout_pending` become one delivery per
//! subscribed endpoint.
//!
//! A write stores its event once ([`crate::events::enqueue`]), so its cost does
//! not depend on how many endpoints the tenant has; the worker runs
//! [`Services::fan_out_events`] before each claim. The outbox guarantees are
//! those of a delivery written in the write's transaction:
//! - none lost: the event and its mark commit with the write, and the mark is
//!   cleared in the transaction that writes the deliveries;
//! - order per customer: events are fanned out in the order the database gave
//!   them (SQLite's rowid, which its one writer hands out in commit order;
//!   PostgreSQL's `events.seq`, from one sequence), one fan-out at a time (on
//!   PostgreSQL an advisory lock, taken without waiting, lets one instance do
//!   it), so their deliveries' `seq` follows that order. An event written
//!   after another one committed comes after it, whichever instance wrote
//!   either and whatever their clocks say.
//! - `webhook-id` stable: it is the event's id, as before.
//!
//! An endpoint that fails (its circuit is open, see [`super::Circuit`]), or
//! that has a batch of deliveries unfinished already, is passed over: it falls
//! behind, and the fan-out keeps only its mark, the position up to which it
//! has its rows. It catches up from there once it may be tried again, or its
//! queue has drained ([`super::catch_up`]). So the rows written per event
//! follow the endpoints that keep up, not every endpoint a tenant has, and no
//! endpoint's queue holds more than about two batches.

use super::*;
use crate::events::{insert_deliveries, takes, QueuedDelivery};
use crate::ids::CustomerId;

/// Events read for one fan-out transaction.
pub const FANOUT_BATCH: i64 = 256;

/// Deliveries written by one fan-out transaction, at most (but always all of
/// one event's): on SQLite every write waits for the one writer, so a long
/// fan-out would hold up the writes of every tenant. Measured with 20
/// endpoints and creates at 416/s (`cargo xtask bench writes`): 256 events
/// at once (5,120 rows) made the creates' p99 421 ms.
const FANOUT_ROWS: usize = 256;

/// The key of PostgreSQL's transaction-level advisory lock that makes one
/// instance at a time fan out: any constant no other lock of Rapport's uses.
const FANOUT_LOCK: i64 = 0x7261_7070_6f72_7401;

/// The oldest events waiting for fan-out, in the database's order. `$1`: how
/// many. Read through the partial index `events_fanout_idx`, which holds only
/// those, in that order; on SQLite the term must be the index's own
/// (`fanout_pending = 1`) for the planner to read it (migration 0046).
pub(super) fn pending_events(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "select rowid as pos, id, tenant_id, type, customer_id, created_at from events \
             where fanout_pending = 1 order by rowid limit $1"
        }
        Backend::Postgres => {
            "select seq as pos, id, tenant_id, type, customer_id, created_at from events \
             where fanout_pending order by seq limit $1"
        }
    }
}

/// Whether any event waits for fan-out: the position of the oldest, through
/// the same index. Asked in the index's order: unordered, PostgreSQL plans a
/// `limit 1` as a scan of the whole table that it hopes ends early, which it
/// does not when its statistics were taken during a burst of pending events
/// (measured: 21 ms against 0.4 ms, on 30,000 events).
pub(super) fn any_pending(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "select rowid from events where fanout_pending = 1 order by rowid limit 1",
        Backend::Postgres => "select seq from events where fanout_pending order by seq limit 1",
    }
}

/// How many events wait for fan-out, through the same index.
pub(super) fn count_pending(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "select count(*) from events where fanout_pending = 1",
        Backend::Postgres => "select count(*) from events where fanout_pending",
    }
}

/// The `n`-th (from 0) unfinished delivery of endpoint `w`, null if it has
/// fewer: whether its queue holds more than `n`. Asked in the order of
/// `webhook_deliveries_key_idx` (not as an `exists`, which PostgreSQL may
/// plan as a scan of the queue that it hopes ends early), it reads that index
/// only, `n + 1` entries at most.
pub(super) fn nth_unfinished(n: i64) -> String {
    format!(
        "(select d.seq from webhook_deliveries d where d.endpoint_id = w.id \
         and d.state in ('pending', 'delivering') order by d.ordering_key, d.seq limit 1 offset {n})"
    )
}

/// An event's position in the stream: the column that orders events
/// (SQLite's rowid, PostgreSQL's `seq`), as a column of `events`.
pub(crate) fn position(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "events.rowid",
        Backend::Postgres => "events.seq",
    }
}

/// An event read from the stream, by the fan-out or a catch-up.
#[derive(sqlx::FromRow)]
pub(super) struct StreamEvent {
    /// Its position ([`position`]).
    pub(super) pos: i64,
    pub(super) id: String,
    pub(super) tenant_id: TenantId,
    #[sqlx(rename = "type")]
    pub(super) event_type: String,
    pub(super) customer_id: Option<CustomerId>,
    pub(super) created_at: i64,
}

impl StreamEvent {
    /// Its delivery to `endpoint_id`.
    pub(super) fn delivery_to<'a>(&'a self, endpoint_id: &'a str) -> QueuedDelivery<'a> {
        QueuedDelivery {
            tenant_id: &self.tenant_id,
            endpoint_id,
            event_id: &self.id,
            ordering_key: self.customer_id.as_deref().unwrap_or(&self.id),
            created_at: self.created_at,
        }
    }
}

/// An endpoint as the fan-out sees it.
#[derive(sqlx::FromRow)]
struct FanoutEndpoint {
    id: String,
    tenant_id: TenantId,
    event_types: String,
    failures: i64,
    /// Set while it is behind: it has its rows up to this position.
    fanout_mark: Option<i64>,
    /// Whether a batch of its deliveries is unfinished already (read only for
    /// one that is not behind).
    queue_full: bool,
}

impl Services {
    /// Fans out every event waiting for it, a transaction at a time, and
    /// returns how many: 0 when none waits, or while another instance is
    /// doing it. The worker fans out before each claim (a bounded number of
    /// batches); this drains the queue, for tests and tools.
    pub async fn fan_out_events(&self) -> CoreResult<usize> {
        let mut total = 0;
        loop {
            let (done, more) = self.fan_out_batch().await?;
            total += done;
            if !more {
                return Ok(total);
            }
        }
    }

    /// Whether any event waits for its fan-out (a read, on a read connection).
    pub(super) async fn fanout_waiting(&self) -> CoreResult<bool> {
        let sql = any_pending(self.db().backend());
        let waiting: Option<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(sql).fetch_optional(pool).await)?;
        Ok(waiting.is_some())
    }

    /// Turns up to [`FANOUT_BATCH`] events waiting for fan-out, oldest first,
    /// into one pending delivery per enabled endpoint of their tenant that
    /// subscribes to them and is not behind (stopping at the event that
    /// reaches [`FANOUT_ROWS`] deliveries), and clears their mark, in one
    /// transaction. Returns how many events it fanned out, and whether more
    /// may wait.
    pub(super) async fn fan_out_batch(&self) -> CoreResult<(usize, bool)> {
        // Looked up first on a read connection: on SQLite a transaction waits
        // for the one writer, and most claims find nothing to fan out.
        if !self.fanout_waiting().await? {
            return Ok((0, false));
        }
        let mut tx = self.db().begin().await?;
        if !self.take_fanout_lock(&mut tx).await? {
            tx.commit().await?;
            return Ok((0, false));
        }
        let sql = pending_events(self.db().backend());
        let events: Vec<StreamEvent> = with_tx!(&mut tx, |conn| sqlx::query_as(sql)
            .bind(FANOUT_BATCH)
            .fetch_all(conn)
            .await)?;
        if events.is_empty() {
            tx.commit().await?;
            return Ok((0, false));
        }
        let mut tenants: Vec<&TenantId> = events.iter().map(|e| &e.tenant_id).collect();
        tenants.sort();
        tenants.dedup();
        let sql = format!(
            "select w.id, w.tenant_id, w.event_types, w.failures, w.fanout_mark, \
             (w.fanout_mark is null and {full} is not null) as queue_full \
             from webhook_endpoints w where w.enabled and not w.receiver and w.tenant_id in ({}) order by w.id",
            placeholders(1, tenants.len()),
            full = nth_unfinished(FANOUT_BATCH - 1),
        );
        let endpoints: Vec<FanoutEndpoint> = with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query_as(&sql);
            for tenant in &tenants {
                q = q.bind(*tenant);
            }
            q.fetch_all(conn).await
        })?;
        let mut marks: Vec<Option<i64>> = endpoints.iter().map(|e| e.fanout_mark).collect();
        let mut deliveries = Vec::new();
        // Endpoints that fall behind now, with their mark.
        let mut behind: Vec<(&str, i64)> = Vec::new();
        let mut taken = 0;
        for event in &events {
            if taken > 0 && deliveries.len() >= FANOUT_ROWS {
                break;
            }
            taken += 1;
            // Matched by its stored name: an event type this build does not
            // know (written by a newer instance during a rolling upgrade)
            // still reaches the endpoints that take it.
            for (endpoint, mark) in endpoints.iter().zip(marks.iter_mut()) {
                if endpoint.tenant_id != event.tenant_id || !takes(&endpoint.event_types, &event.event_type) {
                    continue;
                }
                match *mark {
                    // A failing endpoint falls behind: its rows stop here,
                    // and its catch-up starts from here. So does one with a
                    // batch of its queue unfinished (whose first attempts
                    // have not come back yet, or which is slower than its
                    // events): its queue stays bounded, the rest waits in the
                    // stream.
                    None if endpoint.failures > 0 || endpoint.queue_full => {
                        *mark = Some(event.pos - 1);
                        behind.push((&endpoint.id, event.pos - 1));
                    }
                    // Behind: its catch-up reads this event (it has not
                    // been fanned out yet, so none has read it).
                    Some(mark) if event.pos > mark => {}
                    // Working, or behind but past this event already (on
                    // PostgreSQL an event may commit after later ones were
                    // read): it gets the row now.
                    _ => deliveries.push(event.delivery_to(&endpoint.id)),
                }
            }
        }
        insert_deliveries(&mut tx, &deliveries).await?;
        for (endpoint_id, mark) in &behind {
            with_tx!(&mut tx, |conn| sqlx::query(
                "update webhook_endpoints set fanout_mark = $2 where id = $1 and fanout_mark is null"
            )
            .bind(*endpoint_id)
            .bind(*mark)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        let done = &events[..taken];
        let sql = format!(
            "update events set fanout_pending = $1 where id in ({})",
            placeholders(2, done.len())
        );
        with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query(&sql).bind(false);
            for event in done {
                q = q.bind(&event.id);
            }
            q.execute(conn).await.map(|r| r.rows_affected())
        })?;
        tx.commit().await?;
        let more = taken < events.len() || i64::try_from(events.len()).unwrap_or(i64::MAX) == FANOUT_BATCH;
        Ok((taken, more))
    }

    /// Takes the fan-out's lock for `tx` (one fan-out or catch-up at a time,
    /// over every instance), without waiting: false when another holds it.
    /// SQLite's write transaction is that lock already.
    pub(super) async fn take_fanout_lock(&self, tx: &mut crate::db::Tx) -> CoreResult<bool> {
        if self.db().backend() == Backend::Sqlite {
            return Ok(true);
        }
        Ok(with_tx!(tx, |conn| sqlx::query_scalar(
            "select pg_try_advisory_xact_lock($1)"
        )
        .bind(FANOUT_LOCK)
        .fetch_one(conn)
        .await)?)
    }
}
