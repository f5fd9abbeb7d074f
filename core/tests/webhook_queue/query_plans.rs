//! Query plans: every statement that finds due work reads indexes instead of
//! scanning the queue, even behind a held endpoint's large backlog.

use std::time::Duration;

use rapport_core::{
    backend_tests,
    db::Backend,
    testing::{queue_backlog, TestDb},
    webhooks::deliveries::{work_finding_statements, Busy, WorkParam},
    with_db,
};

use super::{endpoint, failed, limits, policy, BACKLOG};

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

backend_tests!(finding_due_work_reads_indexes_only);
