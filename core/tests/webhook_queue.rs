//! The webhook queue behind a large backlog, on SQLite and PostgreSQL alike:
//! events fan out after the commit, in order, to the endpoints that subscribe; a
//! failing endpoint falls behind and catches up in order; a failing endpoint is
//! held as a whole, claims serve the other endpoints, a crash
//! re-send is the same attempt, every statement that finds due work reads indexes
//! instead of scanning the queue, and retention prunes only finished work.

use std::{collections::HashMap, time::Duration};

use rapport_core::{
    audit::Actor,
    backend_tests,
    backoff::Backoff,
    db::Backend,
    ids::{TenantId, WebhookId},
    tenants::NewTenant,
    testing::{queue_backlog, TestDb},
    time::now_ms,
    webhooks::{
        deliveries::{
            work_finding_statements, AttemptResult, Busy, ClaimLimits, ClaimedDelivery, Outcome, RetryPolicy, WorkParam,
        },
        WebhookIn,
    },
    with_db, Services,
};

const BACKLOG: usize = 20_000;

fn actor() -> Actor {
    Actor::system("tests")
}

/// A webhook endpoint at `url`, of a new tenant `name`.
async fn endpoint(s: &Services, name: &str, url: &str) -> (TenantId, WebhookId) {
    let tenant = s
        .create_tenant(
            NewTenant {
                name: Some(name.into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .id;
    let hook = s
        .create_webhook(
            &tenant,
            WebhookIn {
                url: Some(url.into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    (tenant, hook.endpoint.id)
}

fn limits() -> ClaimLimits {
    ClaimLimits {
        total: 128,
        per_endpoint: 16,
        per_tenant: 64,
        lease: Duration::from_secs(60),
    }
}

fn policy(wait: Duration) -> RetryPolicy {
    RetryPolicy {
        schedule: Backoff::new(vec![wait; 3]),
        ..Default::default()
    }
}

fn failed(d: &ClaimedDelivery) -> AttemptResult {
    AttemptResult {
        seq: d.seq,
        delivery_id: d.id.clone(),
        tenant_id: d.tenant_id.clone(),
        endpoint_id: d.endpoint_id.clone(),
        attempt: d.attempt,
        started_at: now_ms(),
        duration_ms: 3,
        status_code: None,
        error: Some("cannot connect: dns error".into()),
        response_excerpt: None,
        outcome: Outcome::Failed { retry_after: None },
    }
}

async fn attempted(s: &Services, endpoint_id: &str) -> i64 {
    with_db!(s.db(), |pool| sqlx::query_scalar(
        "select count(*) from webhook_deliveries where endpoint_id = $1 and attempts > 0"
    )
    .bind(endpoint_id)
    .fetch_one(pool)
    .await)
    .unwrap()
}

async fn a_failing_endpoint_is_held_whole_and_others_are_served(db: TestDb) {
    let s = db.services();
    let (a, dead) = endpoint(&s, "Alpha", "http://unresolvable.invalid/hook").await;
    let (b, healthy) = endpoint(&s, "Beta", "http://receiver.example/hook").await;
    assert_eq!(
        queue_backlog(&s, &a, std::slice::from_ref(&dead), BACKLOG)
            .await
            .unwrap(),
        BACKLOG
    );

    // The first claim takes the endpoint's share, no more.
    let first = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(first.len(), 16);
    assert!(first.iter().all(|d| d.endpoint_id == dead && d.attempt == 1));
    // With its share in flight it gets nothing more.
    let in_flight = Busy {
        endpoints: HashMap::from([(dead.to_string(), 16)]),
        ..Default::default()
    };
    assert!(s.claim_deliveries(&limits(), &in_flight).await.unwrap().is_empty());

    // They fail: the endpoint is held as a whole.
    let results: Vec<_> = first.iter().map(failed).collect();
    let policy = policy(Duration::from_millis(400));
    s.record_attempts(&results, &policy).await.unwrap();
    let hook = s.get_webhook(&a, &dead).await.unwrap();
    assert!(hook.held_until.is_some() && hook.failing_since.is_some(), "{hook:?}");
    assert!(s
        .claim_deliveries(&limits(), &Busy::default())
        .await
        .unwrap()
        .is_empty());
    let due = s.next_delivery_due().await.unwrap().expect("a reopening is due");
    assert!(due > now_ms() && due <= now_ms() + 400, "due in {} ms", due - now_ms());

    // Another tenant's event goes out at once, behind the backlog.
    queue_backlog(&s, &b, std::slice::from_ref(&healthy), 1).await.unwrap();
    let claimed = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(claimed[0].endpoint_id, healthy);

    // Once the hold ends, one probe goes, and the endpoint is held while it runs.
    tokio::time::sleep(Duration::from_millis(450)).await;
    let probe = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(probe.len(), 1);
    assert_eq!(probe[0].endpoint_id, dead);
    assert_eq!(probe[0].attempt, 2, "the oldest delivery, on its retry");
    assert!(s
        .claim_deliveries(&limits(), &Busy::default())
        .await
        .unwrap()
        .is_empty());
    assert_eq!(attempted(&s, &dead).await, 16, "the backlog itself was never touched");

    // A probe that succeeds closes the circuit: the endpoint takes its share again.
    let mut ok = failed(&probe[0]);
    ok.status_code = Some(200);
    ok.error = None;
    ok.outcome = Outcome::Delivered;
    s.record_attempts(&[ok], &policy).await.unwrap();
    let hook = s.get_webhook(&a, &dead).await.unwrap();
    assert!(hook.held_until.is_none() && hook.failing_since.is_none(), "{hook:?}");
    let next = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(next.len(), 16);
}

async fn a_crash_resend_counts_as_the_same_attempt(db: TestDb) {
    let s = db.services();
    let (a, hook) = endpoint(&s, "Alpha", "http://receiver.example/hook").await;
    queue_backlog(&s, &a, std::slice::from_ref(&hook), 3).await.unwrap();
    let first = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(first.iter().map(|d| d.attempt).collect::<Vec<_>>(), [1, 1, 1]);
    // SQLite at start: the claims of the process that died come back.
    assert_eq!(s.release_claims().await.unwrap(), 3);
    let again = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(again.iter().map(|d| d.attempt).collect::<Vec<_>>(), [1, 1, 1]);
    // PostgreSQL: an instance died; its leases run out and the next claim takes them.
    s.release_claims().await.unwrap();
    let short = ClaimLimits {
        lease: Duration::ZERO,
        ..limits()
    };
    assert_eq!(s.claim_deliveries(&short, &Busy::default()).await.unwrap().len(), 3);
    tokio::time::sleep(Duration::from_millis(5)).await;
    let after_lease = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(after_lease.iter().map(|d| d.attempt).collect::<Vec<_>>(), [1, 1, 1]);
    assert_eq!(after_lease[0].id, first[0].id);
}

async fn finding_due_work_reads_indexes_only(db: TestDb) {
    let s = db.services();
    // The case that matters: a held endpoint with a large backlog, and a working
    // one of another tenant with a few deliveries.
    let (a, dead) = endpoint(&s, "Alpha", "http://unresolvable.invalid/hook").await;
    let (b, healthy) = endpoint(&s, "Beta", "http://receiver.example/hook").await;
    queue_backlog(&s, &a, std::slice::from_ref(&dead), BACKLOG)
        .await
        .unwrap();
    let first = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    let results: Vec<_> = first.iter().map(failed).collect();
    s.record_attempts(&results, &policy(Duration::from_secs(60)))
        .await
        .unwrap();
    queue_backlog(&s, &b, std::slice::from_ref(&healthy), 3).await.unwrap();
    let backend = s.db().backend();
    if backend == Backend::Postgres {
        // Statistics as a burst leaves them: taken while every event waited
        // for its fan-out, read once none does.
        for sql in [
            "update events set fanout_pending = true",
            "analyze",
            "update events set fanout_pending = false",
        ] {
            with_db!(s.writer(), |pool| sqlx::query(sql).execute(pool).await.map(|_| ())).unwrap();
        }
    }
    for (sql, params) in work_finding_statements(backend) {
        let explain = match backend {
            Backend::Sqlite => format!("explain query plan {sql}"),
            Backend::Postgres => format!("explain {sql}"),
        };
        let plan: Vec<String> = with_db!(s.writer(), |pool| {
            let mut q = sqlx::query(&explain);
            for p in &params {
                q = match p {
                    WorkParam::Int(n) => q.bind(*n),
                    WorkParam::Text(_) => q.bind(dead.clone()),
                };
            }
            let rows = q.fetch_all(pool).await.unwrap();
            rows.iter()
                .map(|r| {
                    use sqlx::Row;
                    match backend {
                        Backend::Sqlite => r.try_get::<String, _>(3).unwrap(),
                        Backend::Postgres => r.try_get::<String, _>(0).unwrap(),
                    }
                })
                .collect()
        });
        let plan = plan.join("\n");
        let scans_queue = match backend {
            // `SCAN q` reads the bounded window of one queue's head (itself a
            // search); the fan-out's partial index holds only the events that
            // wait for it.
            Backend::Sqlite => plan.lines().map(str::trim).any(|l| {
                l.starts_with("SCAN ")
                    && !l.starts_with("SCAN q")
                    && l != "SCAN CONSTANT ROW"
                    && !l.ends_with("USING INDEX events_fanout_idx")
            }),
            // A seq scan, or an index walked while filtering on the endpoint.
            Backend::Postgres => {
                plan.contains("Seq Scan on webhook_deliveries")
                    || plan.contains("Seq Scan on events")
                    || plan.lines().any(|l| l.contains("Filter:") && l.contains("endpoint_id"))
            }
        };
        assert!(!scans_queue, "{sql}\nscans:\n{plan}");
    }
}

async fn count(s: &Services, sql: &str) -> i64 {
    with_db!(s.db(), |pool| sqlx::query_scalar(sql).fetch_one(pool).await).unwrap()
}

async fn retention_prunes_finished_work_in_batches_and_keeps_the_rest(db: TestDb) {
    let s = db.services();
    let (a, hook) = endpoint(&s, "Alpha", "http://receiver.example/hook").await;
    queue_backlog(&s, &a, std::slice::from_ref(&hook), 5).await.unwrap();
    let claimed = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
    assert_eq!(claimed.len(), 5);
    // Three delivered; two failed and wait for their retry.
    let results: Vec<_> = claimed
        .iter()
        .enumerate()
        .map(|(n, d)| {
            let mut r = failed(d);
            if n < 3 {
                r.outcome = Outcome::Delivered;
                r.status_code = Some(200);
            }
            r
        })
        .collect();
    s.record_attempts(&results, &policy(Duration::from_secs(60)))
        .await
        .unwrap();
    queue_backlog(&s, &a, std::slice::from_ref(&hook), 2).await.unwrap();
    for (n, status) in ["SENT", "FAILED", "PENDING", "SENT"].iter().enumerate() {
        with_db!(s.writer(), |pool| sqlx::query(
            "insert into mail_outbox (id, tenant_id, to_address, subject, body, status, next_attempt_at, created_at) \
             values ($1, $2, 'a@example.com', 's', 'b', $3, $4, $4)"
        )
        .bind(format!("mail-{n}"))
        .bind(&a)
        .bind(*status)
        .bind(now_ms() - 10)
        .execute(pool)
        .await
        .map(|_| ()))
        .unwrap();
    }

    // A cutoff before all of it deletes nothing.
    let none = s.prune_before(now_ms() - 60_000, 2, || async {}).await.unwrap();
    assert_eq!((none.deliveries, none.events, none.mails), (0, 0, 0));

    let mut pauses = 0;
    let pruned = s
        .prune_before(now_ms() + 1, 2, || {
            pauses += 1;
            async {}
        })
        .await
        .unwrap();
    assert_eq!((pruned.deliveries, pruned.events, pruned.mails), (3, 3, 3));
    assert!(pauses >= 3, "a batch of 2 at a time: {pauses} pauses");
    assert_eq!(count(&s, "select count(*) from webhook_deliveries").await, 4);
    assert_eq!(
        count(&s, "select count(*) from events").await,
        4,
        "unfinished work keeps its event"
    );
    assert_eq!(
        count(&s, "select count(*) from webhook_attempts").await,
        2,
        "the failed attempts of the deliveries still pending"
    );
    assert_eq!(
        count(&s, "select count(*) from mail_outbox where status = 'PENDING'").await,
        1
    );
    assert_eq!(count(&s, "select count(*) from mail_outbox").await, 1);
}

/// Events of several customers, written one per transaction (as writes are),
/// fan out to exactly the endpoints that subscribe, each customer's in the
/// order written; the write itself stores one row whatever the endpoints.
async fn events_fan_out_after_the_commit_to_the_subscribers_in_order(db: TestDb) {
    use rapport_core::events::{self, EventType};
    let s = db.services();
    let (tenant, all) = endpoint(&s, "Alpha", "http://receiver.example/all").await;
    let mut subscribed = vec![all.clone()];
    for n in 0..19 {
        let hook = s
            .create_webhook(
                &tenant,
                WebhookIn {
                    url: Some(format!("http://receiver.example/{n}")),
                    event_types: Some(vec![if n % 2 == 0 { "customer.updated" } else { "message.sent" }.into()]),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        if n % 2 == 0 {
            subscribed.push(hook.endpoint.id);
        }
    }
    let (other_tenant, other) = endpoint(&s, "Beta", "http://receiver.example/beta").await;
    let deliveries = |sql: &'static str| {
        let s = s.clone();
        async move { count(&s, sql).await }
    };
    let mut written = Vec::new();
    for n in 0..30 {
        let customer = format!("c{}", n % 3);
        let mut tx = s.db().begin().await.unwrap();
        let listeners = events::enqueue(
            &mut tx,
            &tenant,
            &actor(),
            EventType::CustomerUpdated,
            Some(&customer),
            &serde_json::json!({"n": n}),
        )
        .await
        .unwrap();
        assert_eq!(listeners, 11);
        tx.commit().await.unwrap();
        written.push((customer, n));
    }
    // As if each was written by an instance whose clock ran behind the one
    // before: the stored times run backwards. The order is the database's.
    with_db!(s.writer(), |pool| sqlx::query(
        "update events set created_at = 4000000000000 - created_at where tenant_id = $1"
    )
    .bind(&tenant)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    let mut tx = s.db().begin().await.unwrap();
    events::enqueue(
        &mut tx,
        &other_tenant,
        &actor(),
        EventType::MessageSent,
        None,
        &serde_json::json!({}),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        deliveries("select count(*) from webhook_deliveries").await,
        0,
        "a write stores its event, not a delivery per endpoint"
    );
    assert_eq!(deliveries("select count(*) from events where fanout_pending").await, 31);

    assert_eq!(s.fan_out_events().await.unwrap(), 31);
    assert_eq!(s.fan_out_events().await.unwrap(), 0, "each event fans out once");
    assert_eq!(deliveries("select count(*) from events where fanout_pending").await, 0);
    assert_eq!(deliveries("select count(*) from webhook_deliveries").await, 30 * 11 + 1);
    for endpoint in &subscribed {
        // In `seq` order, each customer's events come as written.
        let rows: Vec<(String, String)> = with_db!(s.db(), |pool| sqlx::query_as(
            "select d.ordering_key, e.payload from webhook_deliveries d join events e on e.id = d.event_id \
             where d.endpoint_id = $1 order by d.seq"
        )
        .bind(endpoint)
        .fetch_all(pool)
        .await)
        .unwrap();
        assert_eq!(rows.len(), 30, "{endpoint}");
        let mut last: HashMap<String, i64> = HashMap::new();
        for (customer, payload) in rows {
            let n = serde_json::from_str::<serde_json::Value>(&payload).unwrap()["n"]
                .as_i64()
                .unwrap();
            if let Some(before) = last.insert(customer.clone(), n) {
                assert!(before < n, "{customer}: {n} after {before}");
            }
        }
    }
    assert_eq!(
        count(
            &s,
            &format!("select count(*) from webhook_deliveries where endpoint_id = '{other}'")
        )
        .await,
        1,
        "another tenant's event reaches its own endpoint only"
    );
}

fn delivered(d: &ClaimedDelivery) -> AttemptResult {
    AttemptResult {
        status_code: Some(200),
        error: None,
        outcome: Outcome::Delivered,
        ..failed(d)
    }
}

/// Claims and records until nothing is due: every attempt succeeds, except
/// those to `failing`. Returns how many were claimed.
async fn drain(s: &Services, policy: &RetryPolicy, failing: Option<&str>) -> usize {
    let mut total = 0;
    loop {
        let claimed = s.claim_deliveries(&limits(), &Busy::default()).await.unwrap();
        if claimed.is_empty() {
            return total;
        }
        total += claimed.len();
        let results: Vec<_> = claimed
            .iter()
            .map(|d| {
                if Some(d.endpoint_id.as_str()) == failing {
                    failed(d)
                } else {
                    delivered(d)
                }
            })
            .collect();
        s.record_attempts(&results, policy).await.unwrap();
    }
}

/// The `n` of each event queued to `endpoint`, in queue order.
async fn queued_numbers(s: &Services, endpoint: &str) -> Vec<i64> {
    let payloads: Vec<String> = with_db!(s.db(), |pool| sqlx::query_scalar(
        "select e.payload from webhook_deliveries d join events e on e.id = d.event_id \
         where d.endpoint_id = $1 order by d.seq"
    )
    .bind(endpoint)
    .fetch_all(pool)
    .await)
    .unwrap();
    payloads
        .iter()
        .map(|p| {
            serde_json::from_str::<serde_json::Value>(p).unwrap()["n"]
                .as_i64()
                .unwrap()
        })
        .collect()
}

async fn fanout_mark(s: &Services, endpoint: &str) -> Option<i64> {
    with_db!(s.db(), |pool| sqlx::query_scalar(
        "select fanout_mark from webhook_endpoints where id = $1"
    )
    .bind(endpoint)
    .fetch_one(pool)
    .await)
    .unwrap()
}

/// A failing endpoint gets no rows while it fails: it falls behind in the
/// event stream, and once its probe succeeds it catches up, a batch at a time,
/// with every event once and in the stream's order. Disabled while behind, it
/// later skips the events of the time it was disabled, and only those.
async fn a_failing_endpoint_falls_behind_and_catches_up_in_order(db: TestDb) {
    use rapport_core::events::{self, EventType};
    let s = db.services();
    let (tenant, working) = endpoint(&s, "Alpha", "http://receiver.example/ok").await;
    let failing_url = "http://unresolvable.invalid/hook";
    let failing = s
        .create_webhook(
            &tenant,
            WebhookIn {
                url: Some(failing_url.into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .endpoint
        .id;
    let enqueue = |range: std::ops::RangeInclusive<i64>| {
        let (s, tenant) = (s.clone(), tenant.clone());
        async move {
            for n in range {
                let mut tx = s.db().begin().await.unwrap();
                events::enqueue(
                    &mut tx,
                    &tenant,
                    &actor(),
                    EventType::CustomerUpdated,
                    Some(&format!("c{}", n % 3)),
                    &serde_json::json!({"n": n}),
                )
                .await
                .unwrap();
                tx.commit().await.unwrap();
            }
            s.fan_out_events().await.unwrap();
        }
    };
    let held = policy(Duration::from_secs(60));

    // The first event reaches both; the failing endpoint's attempt fails and
    // holds it.
    enqueue(0..=0).await;
    assert_eq!(drain(&s, &held, Some(&failing)).await, 2);
    // 600 more events (more than two batches): rows for the working endpoint
    // only, and only a batch of them while it has not sent any: the rest wait
    // in the stream, and it catches up as it sends.
    enqueue(1..=600).await;
    assert_eq!(queued_numbers(&s, &failing).await, [0], "no rows while it fails");
    assert!(fanout_mark(&s, &failing).await.is_some(), "it is behind");
    assert_eq!(queued_numbers(&s, &working).await, (0..=256).collect::<Vec<_>>());
    assert!(fanout_mark(&s, &working).await.is_some(), "its queue is full");
    // Unfinished: the working one's 256 queued and the 344 it is behind on,
    // the failing one's probe and the 600 it is behind on.
    assert_eq!(s.unfinished_deliveries().await.unwrap(), 256 + 344 + 1 + 600);
    assert_eq!(drain(&s, &held, Some(&failing)).await, 600, "the working one is served");
    assert_eq!(queued_numbers(&s, &working).await, (0..=600).collect::<Vec<_>>());
    assert_eq!(fanout_mark(&s, &working).await, None);
    // Retention deletes the working endpoint's finished deliveries, and keeps
    // every event the one behind has yet to catch up on.
    let pruned = s.prune_before(now_ms() + 1, 500, || async {}).await.unwrap();
    assert_eq!((pruned.deliveries, pruned.events), (601, 0));
    assert_eq!(count(&s, "select count(*) from events").await, 601);

    // Its hold ends, and the probe (its one queued delivery) succeeds: it
    // catches up, every event once, in the stream's order.
    for table in ["webhook_endpoints", "webhook_deliveries"] {
        let column = if table == "webhook_endpoints" {
            "id"
        } else {
            "endpoint_id"
        };
        let sql = format!("update {table} set next_attempt_at = 0 where {column} = $1");
        with_db!(s.writer(), |pool| sqlx::query(&sql)
            .bind(&failing)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))
        .unwrap();
    }
    assert_eq!(drain(&s, &held, None).await, 601);
    assert_eq!(queued_numbers(&s, &failing).await, (0..=600).collect::<Vec<_>>());
    assert_eq!(fanout_mark(&s, &failing).await, None, "caught up");
    // Caught up, it takes part in the fan-out again, and retention may take
    // the events it no longer owes.
    let pruned = s.prune_before(now_ms() + 1, 500, || async {}).await.unwrap();
    assert_eq!((pruned.deliveries, pruned.events), (601, 601));
    enqueue(601..=601).await;
    assert_eq!(queued_numbers(&s, &failing).await, [601]);

    // It fails again (a short hold this time) and falls behind; it is disabled
    // meanwhile, and enabled again, twice.
    let quick = policy(Duration::from_millis(1));
    drain(&s, &quick, Some(&failing)).await;
    enqueue(602..=609).await;
    let switch = |enabled: bool| {
        let (s, tenant, failing) = (s.clone(), tenant.clone(), failing.clone());
        async move {
            s.update_webhook(
                &tenant,
                &failing,
                WebhookIn {
                    url: Some(failing_url.into()),
                    enabled: Some(enabled),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        }
    };
    switch(false).await;
    enqueue(610..=619).await;
    switch(true).await;
    enqueue(620..=624).await;
    switch(false).await;
    enqueue(625..=629).await;
    switch(true).await;
    enqueue(630..=634).await;
    assert_eq!(queued_numbers(&s, &failing).await, [601], "still behind");
    tokio::time::sleep(Duration::from_millis(5)).await;
    // Its retry succeeds, and it catches up on what came before, between and
    // after the times it was disabled, not on what came during them.
    drain(&s, &quick, None).await;
    let expected: Vec<i64> = (601..=609).chain(620..=624).chain(630..=634).collect();
    assert_eq!(queued_numbers(&s, &failing).await, expected);
    assert_eq!(fanout_mark(&s, &failing).await, None, "caught up");
    assert_eq!(
        count(&s, "select count(*) from webhook_fanout_gaps").await,
        0,
        "the gaps passed are deleted"
    );

    // A delivery its receiver keeps refusing waits a minute for its retry;
    // the endpoint works again meanwhile (as when a replay succeeds): what
    // came after catches up at once, not after that retry.
    enqueue(635..=635).await;
    drain(&s, &held, Some(&failing)).await;
    enqueue(636..=640).await;
    assert_eq!(queued_numbers(&s, &failing).await.last(), Some(&635), "behind");
    with_db!(s.writer(), |pool| sqlx::query(
        "update webhook_endpoints set failures = 0, next_attempt_at = 0 where id = $1"
    )
    .bind(&failing)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    // The working endpoint's 5, and 4 of these (638 is of 635's customer: it
    // waits behind it, as it should).
    assert_eq!(drain(&s, &held, None).await, 5 + 4);
    assert_eq!(
        queued_numbers(&s, &failing).await[expected.len()..],
        [635, 636, 637, 638, 639, 640]
    );
    assert_eq!(fanout_mark(&s, &failing).await, None, "caught up");
    assert_eq!(queued_numbers(&s, &working).await, (601..=640).collect::<Vec<_>>());
}

backend_tests!(
    a_failing_endpoint_falls_behind_and_catches_up_in_order,
    events_fan_out_after_the_commit_to_the_subscribers_in_order,
    retention_prunes_finished_work_in_batches_and_keeps_the_rest,
    a_failing_endpoint_is_held_whole_and_others_are_served,
    a_crash_resend_counts_as_the_same_attempt,
    finding_due_work_reads_indexes_only,
);
