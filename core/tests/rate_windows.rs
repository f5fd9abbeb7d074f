//! Rate limits shared through the database (`rapport_core::rate_windows`),
//! on both backends: two `RateWindows` on one database stand for two
//! instances, each with its own leases.

use std::time::Duration;

use rapport_core::{
    backend_tests,
    rate_windows::{Budget, RateWindows, WindowLimit},
    testing::TestDb,
    time::now_ms,
    with_db,
};

const LIMIT: WindowLimit = WindowLimit {
    name: "tests.requests",
    limit: 500,
    window: Duration::from_secs(3600),
};

async fn two_instances_together_allow_the_limit_and_no_more(db: TestDb) {
    let (one, two) = (
        RateWindows::new(db.services().writer().clone()),
        RateWindows::new(db.services().writer().clone()),
    );
    let mut allowed = 0;
    for n in 0..1_000 {
        let instance = if n % 3 == 0 { &one } else { &two };
        if instance.take(&LIMIT, "token", 1).await.is_ok() {
            allowed += 1;
        }
    }
    assert!(allowed <= 500, "{allowed} allowed");
    assert!(allowed >= 450, "{allowed} allowed: leases held back more than 10 %");
    let wait = two.take(&LIMIT, "token", 1).await.unwrap_err();
    assert!((1..=3600).contains(&wait), "{wait}");
    assert!(one.take(&LIMIT, "another token", 1).await.is_ok(), "keys are apart");
    assert!(
        one.take(&LIMIT, "batch", 501).await.is_err(),
        "more than the whole limit never fits"
    );
    // The table holds digests, not the keys.
    let keys: Vec<String> = with_db!(db.services().db(), |pool| sqlx::query_scalar(
        "select key from rate_counters"
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    assert!(!keys.is_empty());
    assert!(keys.iter().all(|k| k.len() == 64 && !k.contains("token")), "{keys:?}");
}

async fn a_budget_holds_the_key_that_spends_it_for_a_period_at_most(db: TestDb) {
    let (one, two) = (
        RateWindows::new(db.services().writer().clone()),
        RateWindows::new(db.services().writer().clone()),
    );
    let budget = Budget {
        name: "tests.failures",
        burst: 10,
        period: Duration::from_secs(60),
    };
    for n in 0..10 {
        let instance = if n % 2 == 0 { &one } else { &two };
        assert_eq!(instance.held(&budget, "10.0.0.1").await.unwrap(), None, "failure {n}");
        instance.spend(&budget, "10.0.0.1").await.unwrap();
    }
    assert_eq!(
        one.held(&budget, "10.0.0.1").await.unwrap(),
        None,
        "the burst is used up, not exceeded"
    );
    two.spend(&budget, "10.0.0.1").await.unwrap();
    let wait = one
        .held(&budget, "10.0.0.1")
        .await
        .unwrap()
        .expect("held on the other instance too");
    assert!((1..=60).contains(&wait), "{wait}");
    // Failures while held (a burst of guesses in flight together) move
    // nothing: the key is still held for one period at most.
    for _ in 0..100 {
        two.spend(&budget, "10.0.0.1").await.unwrap();
    }
    let wait = one.held(&budget, "10.0.0.1").await.unwrap().expect("still held");
    assert!((1..=60).contains(&wait), "held for {wait} s");
    assert_eq!(two.held(&budget, "10.0.0.2").await.unwrap(), None, "another key is not");
}

async fn pruning_deletes_what_no_window_needs(db: TestDb) {
    let windows = RateWindows::new(db.services().writer().clone());
    let short = WindowLimit {
        name: "tests.short",
        limit: 10,
        window: Duration::from_millis(200),
    };
    windows.take(&short, "a", 1).await.unwrap();
    windows.take(&LIMIT, "b", 1).await.unwrap();
    let rows = || async {
        with_db!(db.services().db(), |pool| sqlx::query_scalar::<_, i64>(
            "select count(*) from rate_counters"
        )
        .fetch_one(pool)
        .await)
        .unwrap()
    };
    assert_eq!(rows().await, 2);
    // The short window's row is kept through the next window, then goes.
    let until = now_ms() + 700;
    while now_ms() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(windows.prune().await.unwrap(), 1);
    assert_eq!(rows().await, 1);
}

backend_tests!(
    two_instances_together_allow_the_limit_and_no_more,
    a_budget_holds_the_key_that_spends_it_for_a_period_at_most,
    pruning_deletes_what_no_window_needs,
);
