//! Retention: finished deliveries, their events and sent or failed mails are
//! pruned in batches; pending work and its events are kept.

use std::time::Duration;

use rapport_core::{
    backend_tests,
    testing::{queue_backlog, TestDb},
    time::now_ms,
    webhooks::deliveries::{Busy, Outcome},
    with_db,
};

use super::{count, endpoint, failed, limits, policy};

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

backend_tests!(retention_prunes_finished_work_in_batches_and_keeps_the_rest);
