//! Claims: a failing endpoint is held as a whole while the other endpoints are
//! served, and a crash re-send (released claims, run-out leases) is the same attempt.

use std::{collections::HashMap, time::Duration};

use rapport_core::{
    backend_tests,
    testing::{queue_backlog, TestDb},
    time::now_ms,
    webhooks::deliveries::{Busy, ClaimLimits, Outcome},
    with_db, Services,
};

use super::{endpoint, failed, limits, policy, BACKLOG};

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

backend_tests!(
    a_failing_endpoint_is_held_whole_and_others_are_served,
    a_crash_resend_counts_as_the_same_attempt,
);
