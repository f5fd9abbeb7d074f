//! Catching up: an endpoint that fell behind in the event stream (it failed,
//! or its queue was full) gets its deliveries, in the stream's order, once it
//! may be tried again.
//!
//! The fan-out ([`super::fanout`]) passes such an endpoint over and leaves
//! its mark: the position up to which it has its rows. An endpoint behind may
//! catch up when it is enabled and either it works again (a probe of its queue
//! succeeded) with less than a batch of its queue unfinished, or its hold has
//! passed with nothing unfinished (the catch-up's rows then give its probe).
//! One catch-up reads up to [`FANOUT_BATCH`] events of its tenant after the
//! mark, writes a row for each it subscribes to, and moves the mark; reading
//! fewer, it is caught up and takes part in the fan-out again. So an endpoint that stays dead has one
//! batch of rows at most however long it fails, and one that works again gets
//! its backlog a batch at a time, as the one before drains.
//!
//! Like the fan-out, a catch-up holds the fan-out's lock: the two never
//! interleave, so an event is read by exactly one of them for each endpoint.
//!
//! An endpoint disabled while behind must not get the events of the time it
//! was disabled (disabled endpoints receive nothing, see
//! [`crate::webhooks::WebhookEndpoint::enabled`]), but still gets those from
//! before and after: each time it is disabled opens a gap at the stream's end
//! ([`open_gap`]), enabling it closes the gap there ([`close_gap`]), and the
//! catch-up reads up to the next gap, jumps over it, and deletes it.

use super::fanout::{nth_unfinished, position, StreamEvent};
use super::*;
use crate::events::{insert_deliveries, takes};

/// Endpoints caught up in one worker round, at most, each in a transaction of
/// its own (on SQLite every write waits for the one writer).
const CATCH_UPS_PER_ROUND: i64 = 4;

/// Which endpoints may catch up now (`$1`: now): enabled and behind, and
/// - working again, with less than a batch of its queue unfinished: a
///   delivery that waits hours for its retry (one its receiver keeps
///   refusing) does not hold up the rest, and the queue stays bounded;
/// - or failing, at the end of its hold, with nothing unfinished to probe
///   with: it gets one batch, so an endpoint that stays dead has one at most.
fn ready() -> String {
    ready_once("w.next_attempt_at <= $1 and ")
}

/// [`ready`], with the condition on a failing endpoint's hold given: the
/// worker's sleep ([`next_catch_up`]) asks without it, for when holds end.
fn ready_once(hold_ended: &str) -> String {
    format!(
        "w.fanout_mark is not null and w.enabled and not w.receiver \
         and ((w.failures = 0 and {} is null) or ({hold_ended}{} is null))",
        nth_unfinished(FANOUT_BATCH - 1),
        nth_unfinished(0),
    )
}

/// The columns a catch-up reads of an endpoint.
const BEHIND_COLUMNS: &str = "w.id, w.tenant_id, w.event_types, w.fanout_mark";

/// The endpoints that may catch up now, furthest behind first (read in the
/// order of `webhook_endpoints_behind_idx`, which holds only endpoints
/// behind). None waits for long: one that catches up has rows to send, and is
/// not ready again until they are (nearly) done. `$1`: now, `$2`: how many.
fn ready_endpoints() -> String {
    format!(
        "select {BEHIND_COLUMNS} from webhook_endpoints w where {} order by w.fanout_mark, w.id limit $2",
        ready()
    )
}

/// When an endpoint behind may next catch up: at once for one that works
/// again, else the end of the earliest hold of one with nothing unfinished
/// (the others are woken by their queue). `$1`: now.
fn next_catch_up() -> String {
    format!(
        "select min(case when w.failures = 0 then $1 else w.next_attempt_at end) from webhook_endpoints w \
         where {}",
        ready_once("")
    )
}

/// One tenant's events after a mark and up to a bound, in the stream's
/// order, that the fan-out has passed and that name no endpoint of their own.
/// `$1`: tenant, `$2`: mark, `$3`: bound (the next gap's start), `$4`: how
/// many.
pub(super) fn stream_after(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "select rowid as pos, id, tenant_id, type, customer_id, created_at from events \
             where tenant_id = $1 and rowid > $2 and rowid <= $3 \
             and fanout_pending = 0 and directed = 0 order by rowid limit $4"
        }
        Backend::Postgres => {
            "select seq as pos, id, tenant_id, type, customer_id, created_at from events \
             where tenant_id = $1 and seq > $2 and seq <= $3 \
             and not fanout_pending and not directed order by seq limit $4"
        }
    }
}

/// Whether the event at position `pos` (an SQL expression) is owed to
/// endpoint `w` behind in the stream: after its mark, and in none of its
/// gaps. Retention keeps such events, and
/// [`Services::unfinished_deliveries`] counts them.
pub(crate) fn owed(pos: &str) -> String {
    format!(
        "w.fanout_mark < {pos} and not exists (select 1 from webhook_fanout_gaps g \
         where g.endpoint_id = w.id and {pos} > g.gap_from and (g.gap_to is null or {pos} <= g.gap_to))"
    )
}

/// Opens a gap in `tx` at the stream's end for endpoint `endpoint_id` of
/// `tenant_id` when it is enabled and behind: run before the write that
/// disables it, so the events raised while it is disabled are skipped. (Two
/// gaps opened at the same position, with no event between, are one.)
pub(crate) async fn open_gap(
    tx: &mut crate::db::Tx,
    backend: Backend,
    tenant_id: &TenantId,
    endpoint_id: &WebhookId,
) -> CoreResult<()> {
    // The `where` clause also settles SQLite's parse of `insert … select …
    // on conflict`.
    let sql = format!(
        "insert into webhook_fanout_gaps (endpoint_id, gap_from) \
         select w.id, {end} from webhook_endpoints w \
         where w.id = $1 and w.tenant_id = $2 and w.enabled and w.fanout_mark is not null \
         on conflict (endpoint_id, gap_from) do update set gap_to = null",
        end = stream_end(backend, 2)
    );
    run_on_endpoint(tx, &sql, tenant_id, endpoint_id).await
}

/// Closes endpoint `endpoint_id`'s open gap, if any, at the stream's end: run
/// before the write that enables it again.
pub(crate) async fn close_gap(
    tx: &mut crate::db::Tx,
    backend: Backend,
    tenant_id: &TenantId,
    endpoint_id: &WebhookId,
) -> CoreResult<()> {
    let sql = format!(
        "update webhook_fanout_gaps set gap_to = {end} where endpoint_id = $1 and gap_to is null \
         and exists (select 1 from webhook_endpoints w where w.id = $1 and w.tenant_id = $2 and not w.enabled)",
        end = stream_end(backend, 2)
    );
    run_on_endpoint(tx, &sql, tenant_id, endpoint_id).await
}

/// Runs `sql` in `tx` with `$1`: the endpoint, `$2`: its tenant.
async fn run_on_endpoint(
    tx: &mut crate::db::Tx,
    sql: &str,
    tenant_id: &TenantId,
    endpoint_id: &WebhookId,
) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(sql)
        .bind(endpoint_id)
        .bind(tenant_id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}

/// The sample statements of [`super::work_finding_statements`] for the
/// catch-up: which endpoints may catch up, and the events one reads.
pub(super) fn statements(backend: Backend, now: i64) -> Vec<(String, Vec<WorkParam>)> {
    use WorkParam::{Int, Text};
    vec![
        (ready_endpoints(), vec![Int(now), Int(CATCH_UPS_PER_ROUND)]),
        (next_catch_up(), vec![Int(now)]),
        (
            stream_after(backend).to_string(),
            vec![Text(String::new()), Int(0), Int(i64::MAX), Int(FANOUT_BATCH)],
        ),
    ]
}

/// The end of a tenant's event stream, as an SQL expression over parameter
/// `$tenant`: the position of its last event (0 when it has none).
fn stream_end(backend: Backend, tenant: usize) -> String {
    format!(
        "(select coalesce(max({pos}), 0) from events where events.tenant_id = ${tenant})",
        pos = position(backend)
    )
}

/// An endpoint behind in the stream, as a catch-up reads it.
#[derive(sqlx::FromRow)]
struct BehindEndpoint {
    id: WebhookId,
    tenant_id: TenantId,
    event_types: String,
    fanout_mark: i64,
}

impl Services {
    /// Catches up the endpoints behind that may catch up now (a few per
    /// round, a batch each). Returns how many deliveries it wrote.
    pub(super) async fn catch_up_round(&self) -> CoreResult<usize> {
        let sql = ready_endpoints();
        let ready: Vec<BehindEndpoint> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(now_ms())
            .bind(CATCH_UPS_PER_ROUND)
            .fetch_all(pool)
            .await)?;
        let mut written = 0;
        for endpoint in ready {
            written += self.catch_up(&endpoint.id).await?;
        }
        Ok(written)
    }

    /// When an endpoint behind may next catch up (see [`next_catch_up`]).
    pub(super) async fn next_catch_up(&self, now: i64) -> CoreResult<Option<i64>> {
        let sql = next_catch_up();
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(&sql)
            .bind(now)
            .fetch_one(pool)
            .await)?)
    }

    /// One batch of one endpoint's catch-up, in one transaction under the
    /// fan-out's lock, the endpoint read again in it (it may have caught up,
    /// or failed, since it was listed).
    async fn catch_up(&self, endpoint_id: &WebhookId) -> CoreResult<usize> {
        let mut tx = self.db().begin().await?;
        if !self.take_fanout_lock(&mut tx).await? {
            tx.commit().await?;
            return Ok(0);
        }
        let sql = format!(
            "select {BEHIND_COLUMNS} from webhook_endpoints w where w.id = $2 and {}",
            ready()
        );
        let endpoint: Option<BehindEndpoint> = with_tx!(&mut tx, |conn| sqlx::query_as(&sql)
            .bind(now_ms())
            .bind(endpoint_id)
            .fetch_optional(conn)
            .await)?;
        let Some(endpoint) = endpoint else {
            tx.commit().await?;
            return Ok(0);
        };
        // Its gaps, in the stream's order (an enabled endpoint's are all
        // closed; one still open would be passed only once closed).
        let gaps: Vec<(i64, Option<i64>)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select gap_from, gap_to from webhook_fanout_gaps where endpoint_id = $1 order by gap_from"
        )
        .bind(&endpoint.id)
        .fetch_all(conn)
        .await)?;
        // Up to a batch of events: read up to the next gap, jump over it, and
        // read on, until the batch is full or the stream ends.
        let mut mark = endpoint.fanout_mark;
        let mut events: Vec<StreamEvent> = Vec::new();
        let mut next_gap = gaps.iter();
        let caught_up = loop {
            let gap = next_gap.next();
            let room = FANOUT_BATCH - i64::try_from(events.len()).unwrap_or(FANOUT_BATCH);
            let read: Vec<StreamEvent> = with_tx!(&mut tx, |conn| sqlx::query_as(stream_after(self.db().backend()))
                .bind(&endpoint.tenant_id)
                .bind(mark)
                .bind(gap.map_or(i64::MAX, |(from, _)| *from))
                .bind(room)
                .fetch_all(conn)
                .await)?;
            let full = i64::try_from(read.len()).unwrap_or(i64::MAX) >= room;
            mark = read.last().map_or(mark, |event| event.pos);
            events.extend(read);
            match gap {
                _ if full => break false,
                Some((_, Some(to))) => mark = mark.max(*to),
                Some((_, None)) => break false,
                None => break true,
            }
        };
        let deliveries: Vec<_> = events
            .iter()
            .filter(|event| takes(&endpoint.event_types, &event.event_type))
            .map(|event| event.delivery_to(&endpoint.id))
            .collect();
        insert_deliveries(&mut tx, &deliveries).await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from webhook_fanout_gaps where endpoint_id = $1 and gap_to <= $2"
        )
        .bind(&endpoint.id)
        .bind(mark)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set fanout_mark = $2 where id = $1"
        )
        .bind(&endpoint.id)
        .bind((!caught_up).then_some(mark))
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(deliveries.len())
    }
}
