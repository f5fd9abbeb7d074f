//! Catching up: a failing endpoint falls behind in the event stream and, once
//! it works again, catches up in order, skipping only what came while disabled.

use std::time::Duration;

use rapport_core::{
    backend_tests,
    testing::TestDb,
    time::now_ms,
    webhooks::{
        deliveries::{AttemptResult, Busy, ClaimedDelivery, Outcome, RetryPolicy},
        WebhookIn,
    },
    with_db, Services,
};

use super::{actor, count, endpoint, failed, limits, policy};

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

backend_tests!(a_failing_endpoint_falls_behind_and_catches_up_in_order);
