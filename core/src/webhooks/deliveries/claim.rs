//! Claiming due deliveries, and when the worker should look again.

use super::*;

/// The most deliveries of one endpoint a claim reads: the head of its queue. Rows
/// there that are not due, or that wait behind an older delivery of their
/// customer, are passed over; the rest of the queue is not read at all, so a claim
/// costs the same behind a backlog of any size.
pub const QUEUE_WINDOW: i64 = 256;

/// How much one claim may take.
#[derive(Debug, Clone)]
pub struct ClaimLimits {
    /// Deliveries in all.
    pub total: usize,
    /// Deliveries of one endpoint in flight at once, counting those the worker
    /// still has in flight: one slow endpoint cannot take every slot.
    pub per_endpoint: usize,
    /// Deliveries of one tenant in flight at once, probes included: a tenant's
    /// many hanging endpoints (names whose lookup times out, say) cannot either.
    pub per_tenant: usize,
    /// How long a claim lasts; past it another worker may retry.
    pub lease: Duration,
}

/// What a worker has in flight (claimed, not yet recorded), per endpoint and per
/// tenant id; a claim leaves room for it.
#[derive(Debug, Clone, Default)]
pub struct Busy {
    /// Deliveries in flight per endpoint id.
    pub endpoints: HashMap<String, usize>,
    /// Deliveries in flight per tenant id.
    pub tenants: HashMap<String, usize>,
}

/// How soon the worker looks again while events wait for their fan-out.
const FANOUT_RETRY_MS: i64 = 20;

/// Fan-out batches run before one claim, at most.
const FANOUT_ROUNDS: usize = 8;

/// Claims whose lease ran out go back to the queue as the same attempt. `$1`: now.
const RELEASE_EXPIRED: &str = "update webhook_deliveries set state = 'pending', lease_until = null, \
     attempts = case when attempts > 0 then attempts - 1 else 0 end \
     where state = 'delivering' and lease_until <= $1";

/// Enabled endpoints that are not held and have a due delivery, least recently
/// served first. `$1`: now, `$2`: how many. Each endpoint's earliest due time is
/// the first entry of its queue in `webhook_deliveries_endpoint_due_idx`; asked as
/// an ordered `limit 1` (not an `exists`, which PostgreSQL may plan as a scan that
/// it hopes ends early) it is one index probe per endpoint, whatever the held
/// endpoints have queued.
const DUE_ENDPOINTS: &str = "select w.id, w.tenant_id, w.failures from webhook_endpoints w \
     where w.enabled and w.next_attempt_at <= $1 \
     and (select d.next_attempt_at from webhook_deliveries d where d.endpoint_id = w.id and d.state = 'pending' \
       order by d.next_attempt_at limit 1) <= $1 \
     order by w.next_attempt_at, w.id limit $2";

/// The deliveries one endpoint may send now, from the head of its queue: due, and
/// first of their customer. `$1`: endpoint, `$2`: now, `$3`: [`QUEUE_WINDOW`],
/// `$4`: how many.
const QUEUE_HEAD: &str = "select q.seq from (select seq, ordering_key, next_attempt_at, created_at \
       from webhook_deliveries where endpoint_id = $1 and state = 'pending' order by created_at, seq limit $3) q \
     where q.next_attempt_at <= $2 \
     and not exists (select 1 from webhook_deliveries e where e.endpoint_id = $1 \
       and e.ordering_key = q.ordering_key and e.seq < q.seq and e.state in ('pending', 'delivering')) \
     order by q.created_at, q.seq limit $4";

/// The next time something may become claimable, `$1` being now: a held endpoint
/// reopens, a retry of a working endpoint falls due, or a lease ends. One probe
/// of `webhook_deliveries_endpoint_due_idx` per enabled endpoint.
const NEXT_DUE: &str = "select \
     (select min(case when w.next_attempt_at > $1 then w.next_attempt_at \
        else (select d.next_attempt_at from webhook_deliveries d where d.endpoint_id = w.id \
          and d.state = 'pending' and d.next_attempt_at > $1 order by d.next_attempt_at limit 1) end) \
      from webhook_endpoints w where w.enabled \
      and (select d.next_attempt_at from webhook_deliveries d where d.endpoint_id = w.id and d.state = 'pending' \
        order by d.next_attempt_at limit 1) is not null), \
     (select lease_until from webhook_deliveries where state = 'delivering' and lease_until > $1 \
       order by lease_until limit 1)";

/// The statements that find due webhook work, each with sample parameters (all
/// integers; a text `$1` is an endpoint id): what a claim and the worker's sleep
/// read. Tests `EXPLAIN` them on both backends to check that each reads indexes
/// and never scans the queue.
pub fn work_finding_statements(backend: Backend) -> Vec<(String, Vec<WorkParam>)> {
    use WorkParam::{Int, Text};
    let now = now_ms();
    let mut statements = vec![
        (
            super::fanout::pending_events(backend).to_string(),
            vec![Int(super::fanout::FANOUT_BATCH)],
        ),
        (super::fanout::any_pending(backend).to_string(), vec![]),
        (RELEASE_EXPIRED.to_string(), vec![Int(now)]),
        (DUE_ENDPOINTS.to_string(), vec![Int(now), Int(128)]),
        (
            QUEUE_HEAD.to_string(),
            vec![Text(String::new()), Int(now), Int(QUEUE_WINDOW), Int(32)],
        ),
        (NEXT_DUE.to_string(), vec![Int(now)]),
    ];
    statements.extend(super::catch_up::statements(backend, now));
    statements
}

/// A parameter of a statement from [`work_finding_statements`].
#[derive(Debug, Clone)]
pub enum WorkParam {
    /// An integer (a time, a count).
    Int(i64),
    /// A text (an id: an endpoint's, or a tenant's where the statement reads events).
    Text(String),
}

impl Services {
    /// Fans out waiting events, then claims due deliveries for `limits.lease`;
    /// each claim counts as an attempt.
    ///
    /// Due endpoints are read from `webhook_endpoints` (an endpoint held by its
    /// circuit is skipped by the index, whatever its backlog), least recently served
    /// first, and each gives at most `limits.per_endpoint` deliveries in flight, or
    /// one probe while its circuit is half-open, and a tenant no more than
    /// `limits.per_tenant` (both counting `busy`, this worker's unrecorded ones). Within an endpoint only the head of its queue is read.
    /// On PostgreSQL the endpoint rows are locked with `SKIP LOCKED`, so two
    /// instances never serve one endpoint at once and never claim one attempt twice.
    pub async fn claim_deliveries(&self, limits: &ClaimLimits, busy: &Busy) -> CoreResult<Vec<ClaimedDelivery>> {
        if limits.total == 0 {
            return Ok(vec![]);
        }
        // Events written since the last claim get their deliveries first (a
        // bounded number of batches: a flood of events cannot stall the claim).
        for _ in 0..FANOUT_ROUNDS {
            if !self.fan_out_batch().await?.1 {
                break;
            }
        }
        // Endpoints behind in the stream that may be tried again get their
        // next batch of rows.
        self.catch_up_round().await?;
        let now = now_ms();
        let lease_until = now + duration_ms(limits.lease);
        // `no key update`, not `update`: a claim changes no key of the endpoint,
        // and the weaker lock does not conflict with the key-share lock that a
        // transaction inserting a delivery (whose foreign key names the endpoint)
        // holds until it commits. With `for update`, every claim during a write
        // burst skipped the endpoints being written to, and deliveries starved.
        let lock = match self.db().backend() {
            Backend::Postgres => "for no key update of w skip locked",
            Backend::Sqlite => "",
        };
        let mut tx = self.db().begin().await?;
        // Claims whose lease ran out belong to an instance that died (or could not
        // record them): they go back to the queue, and the re-send counts as the
        // same attempt.
        with_tx!(&mut tx, |conn| sqlx::query(RELEASE_EXPIRED)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        let due_endpoints = format!("{DUE_ENDPOINTS} {lock}");
        let endpoints: Vec<(WebhookId, String, i64)> = with_tx!(&mut tx, |conn| sqlx::query_as(&due_endpoints)
            .bind(now)
            .bind(i64::try_from(limits.total).unwrap_or(i64::MAX))
            .fetch_all(conn)
            .await)?;
        let mut seqs: Vec<i64> = Vec::new();
        let mut served: Vec<WebhookId> = Vec::new();
        let mut probed: Vec<WebhookId> = Vec::new();
        let mut tenants: HashMap<String, usize> = busy.tenants.clone();
        for (endpoint, tenant, failures) in endpoints {
            let left = limits.total.saturating_sub(seqs.len());
            let room = if failures > 0 {
                // Half-open: one attempt tells whether the endpoint works again.
                1
            } else {
                limits
                    .per_endpoint
                    .saturating_sub(busy.endpoints.get(endpoint.as_str()).copied().unwrap_or(0))
            };
            let tenant_room = limits
                .per_tenant
                .saturating_sub(tenants.get(&tenant).copied().unwrap_or(0));
            let take = room.min(left).min(tenant_room);
            if take == 0 {
                continue;
            }
            let found: Vec<i64> = with_tx!(&mut tx, |conn| sqlx::query_scalar(QUEUE_HEAD)
                .bind(&endpoint)
                .bind(now)
                .bind(QUEUE_WINDOW)
                .bind(i64::try_from(take).unwrap_or(i64::MAX))
                .fetch_all(conn)
                .await)?;
            if found.is_empty() {
                continue;
            }
            *tenants.entry(tenant).or_default() += found.len();
            seqs.extend(found);
            if failures > 0 {
                probed.push(endpoint);
            } else {
                served.push(endpoint);
            }
        }
        if seqs.is_empty() {
            tx.commit().await?;
            return Ok(vec![]);
        }
        let sql = format!(
            "select d.seq, d.id, d.tenant_id, d.endpoint_id, w.url, w.secret, w.previous_secret, \
             w.previous_secret_until, d.event_id, e.type as event_type, e.actor, e.payload, d.attempts \
             from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id \
             join events e on e.id = d.event_id where d.seq in ({}) order by d.seq",
            placeholders(1, seqs.len())
        );
        let rows: Vec<ClaimRow> = with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query_as(&sql);
            for seq in &seqs {
                q = q.bind(*seq);
            }
            q.fetch_all(conn).await
        })?;
        // Secrets are opened before anything is claimed: a row whose secret
        // cannot be opened (sealed under a key this instance was not given) is
        // left pending, for an instance that can, and holds up no other row.
        let sealer = self.sealer();
        let open = |stored: &str| sealer.open(Purpose::SigningSecret, stored);
        let mut claimed = Vec::with_capacity(rows.len());
        for r in rows {
            let mut secrets = match open(&r.secret) {
                Ok(secret) => vec![secret],
                Err(err) => {
                    if !probed.contains(&r.endpoint_id) {
                        tracing::warn!(endpoint = %r.endpoint_id, error = %err, "a webhook secret cannot be opened; its deliveries wait");
                        // Held like a probe, so it is looked at again once a lease
                        // has passed rather than on every round.
                        served.retain(|e| *e != r.endpoint_id);
                        probed.push(r.endpoint_id);
                    }
                    continue;
                }
            };
            if let (Some(previous), Some(until)) = (&r.previous_secret, r.previous_secret_until) {
                if until > now {
                    match open(previous) {
                        Ok(secret) => secrets.push(secret),
                        Err(err) => {
                            tracing::warn!(endpoint = %r.endpoint_id, error = %err, "a previous webhook secret cannot be opened; only the current one signs")
                        }
                    }
                }
            }
            claimed.push(ClaimedDelivery {
                seq: r.seq,
                id: r.id,
                tenant_id: r.tenant_id,
                endpoint_id: r.endpoint_id,
                url: r.url,
                secrets,
                event_id: r.event_id,
                event_type: r.event_type,
                actor: r.actor,
                payload: r.payload,
                // The claim below counts this attempt.
                attempt: r.attempts + 1,
            });
        }
        let seqs: Vec<i64> = claimed.iter().map(|d| d.seq).collect();
        if seqs.is_empty() {
            tx.commit().await?;
            return Ok(vec![]);
        }
        let claim = format!(
            "update webhook_deliveries set state = 'delivering', lease_until = $1, attempts = attempts + 1 \
             where seq in ({})",
            placeholders(2, seqs.len())
        );
        with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query(&claim).bind(lease_until);
            for seq in &seqs {
                q = q.bind(*seq);
            }
            q.execute(conn).await.map(|r| r.rows_affected())
        })?;
        // A served endpoint goes to the back of the line; a probed one is held
        // until its probe is recorded (or its lease ends).
        for (ids, until) in [(&served, now), (&probed, lease_until)] {
            if ids.is_empty() {
                continue;
            }
            let sql = format!(
                "update webhook_endpoints set next_attempt_at = $1 where id in ({})",
                placeholders(2, ids.len())
            );
            with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql).bind(until);
                for id in ids.iter() {
                    q = q.bind(id);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        tx.commit().await?;
        Ok(claimed)
    }

    /// When the worker should look again: the earliest future time at which a held
    /// endpoint reopens, a retry falls due, or a claim's lease ends. `None` when
    /// nothing is scheduled (new events wake the worker themselves). Costs an index
    /// probe per enabled endpoint, never a scan of a queue.
    pub async fn next_delivery_due(&self) -> CoreResult<Option<i64>> {
        let now = now_ms();
        // Events still waiting for their fan-out (a claim fans out a bounded
        // number, and another instance may hold the fan-out's lock) are due
        // at once: looked at again shortly, not after the idle sleep.
        if self.fanout_waiting().await? {
            return Ok(Some(now + FANOUT_RETRY_MS));
        }
        // So are endpoints behind in the stream that may catch up; the others
        // at the end of their hold.
        let catch_up = self.next_catch_up(now).await?;
        if catch_up.is_some_and(|at| at <= now) {
            return Ok(Some(now + FANOUT_RETRY_MS));
        }
        let (endpoint, lease): (Option<i64>, Option<i64>) = with_db!(self.db(), |pool| {
            sqlx::query_as(NEXT_DUE).bind(now).fetch_one(pool).await
        })?;
        Ok(endpoint.into_iter().chain(lease).chain(catch_up).min())
    }

    /// Gives back every claimed delivery (SQLite at start: the only worker died with
    /// its claims), as the same attempt, and lets their endpoints be tried at once.
    /// PostgreSQL instances rely on leases instead.
    pub async fn release_claims(&self) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set next_attempt_at = $1 where next_attempt_at > $1 and id in \
             (select endpoint_id from webhook_deliveries where state = 'delivering')"
        )
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let released = with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_deliveries set state = 'pending', lease_until = null, \
             attempts = case when attempts > 0 then attempts - 1 else 0 end where state = 'delivering'"
        )
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(released)
    }
}
