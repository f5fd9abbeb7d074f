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
//! before: disabling it notes the stream's end as `fanout_gap_from`, enabling
//! it again as `fanout_gap_to`, and the catch-up skips the events between. (One
//! gap is kept: disabled again before its catch-up passed the first gap, it
//! skips from the first gap's start.)

use super::fanout::{position, StreamEvent};
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

/// The columns a catch-up reads of an endpoint.
const BEHIND_COLUMNS: &str = "w.id, w.tenant_id, w.event_types, w.fanout_mark, w.fanout_gap_from, w.fanout_gap_to";

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

/// One tenant's events after a mark, in the stream's order, that the fan-out
/// has passed and that name no endpoint of their own, outside a gap. `$1`:
/// tenant, `$2`: mark, `$3` and `$4`: the gap (events after `$3` up to `$4`
/// are skipped), `$5`: how many.
pub(super) fn stream_after(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => {
            "select rowid as pos, id, tenant_id, type, customer_id, created_at from events \
             where tenant_id = $1 and rowid > $2 and (rowid <= $3 or rowid > $4) \
             and fanout_pending = 0 and directed = 0 order by rowid limit $5"
        }
        Backend::Postgres => {
            "select seq as pos, id, tenant_id, type, customer_id, created_at from events \
             where tenant_id = $1 and seq > $2 and (seq <= $3 or seq > $4) \
             and not fanout_pending and not directed order by seq limit $5"
        }
    }
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
            vec![
                Text(String::new()),
                Int(0),
                Int(i64::MAX),
                Int(i64::MAX),
                Int(FANOUT_BATCH),
            ],
        ),
    ]
}

/// The end of a tenant's event stream, as an SQL expression over parameter
/// `$tenant`: the position of its last event (0 when it has none).
pub(crate) fn stream_end(backend: Backend, tenant: usize) -> String {
    format!(
        "(select coalesce(max({pos}), 0) from events where events.tenant_id = ${tenant})",
        pos = position(backend)
    )
}

/// An endpoint behind in the stream, as a catch-up reads it.
#[derive(sqlx::FromRow)]
struct BehindEndpoint {
    id: String,
    tenant_id: TenantId,
    event_types: String,
    fanout_mark: i64,
    fanout_gap_from: Option<i64>,
    fanout_gap_to: Option<i64>,
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
    async fn catch_up(&self, endpoint_id: &str) -> CoreResult<usize> {
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
        let events: Vec<StreamEvent> = with_tx!(&mut tx, |conn| sqlx::query_as(stream_after(self.db().backend()))
            .bind(&endpoint.tenant_id)
            .bind(endpoint.fanout_mark)
            .bind(endpoint.fanout_gap_from.unwrap_or(i64::MAX))
            .bind(endpoint.fanout_gap_to.unwrap_or(i64::MAX))
            .bind(FANOUT_BATCH)
            .fetch_all(conn)
            .await)?;
        let deliveries: Vec<_> = events
            .iter()
            .filter(|event| takes(&endpoint.event_types, &event.event_type))
            .map(|event| event.delivery_to(&endpoint.id))
            .collect();
        insert_deliveries(&mut tx, &deliveries).await?;
        let caught_up = i64::try_from(events.len()).unwrap_or(i64::MAX) < FANOUT_BATCH;
        let mark = events.last().map_or(endpoint.fanout_mark, |event| event.pos);
        let past_gap = caught_up || endpoint.fanout_gap_to.is_some_and(|to| mark >= to);
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set fanout_mark = $2, \
             fanout_gap_from = case when $3 then null else fanout_gap_from end, \
             fanout_gap_to = case when $3 then null else fanout_gap_to end where id = $1"
        )
        .bind(&endpoint.id)
        .bind((!caught_up).then_some(mark))
        .bind(past_gap)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(deliveries.len())
    }
}
