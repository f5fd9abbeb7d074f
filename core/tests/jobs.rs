//! The durable job table, on SQLite and PostgreSQL alike: scheduling moves a
//! timer instead of adding a second, cancelling removes exactly what it names;
//! claims take due jobs oldest first under a lease, a lapsed lease is claimed
//! again, and a runner that finishes late neither deletes nor moves a job that was
//! scheduled or claimed again meanwhile; failures retry and then give up; mail in
//! the outbox always has its job; and concurrent claimers (two `Services` on one
//! PostgreSQL database) never get the same job twice.

use std::collections::{HashMap, HashSet};

use rapport_core::{
    audit::Actor,
    backend_tests,
    db::{Backend, Db},
    jobs::{self, Job, JobKind, JobState, PARKED},
    tenants::NewTenant,
    testing::TestDb,
    time::now_ms,
    with_db, Services,
};
use serde_json::json;

const LEASE: i64 = 60_000;

async fn schedule(s: &Services, key: &str, due_at: i64, payload: serde_json::Value) {
    s.schedule_job(None, JobKind::Probe, key, due_at, &payload)
        .await
        .unwrap();
}

async fn state(s: &Services, key: &str) -> Option<JobState> {
    s.job_state(JobKind::Probe, key).await.unwrap()
}

async fn count(s: &Services, sql: &str) -> i64 {
    with_db!(s.db(), |pool| sqlx::query_scalar(sql).fetch_one(pool).await).unwrap()
}

/// Lets an hour pass for the probe job `key`: its due time and lease move an
/// hour back (no test sleeps out a lease on a shared machine).
async fn an_hour_passes(s: &Services, key: &str) {
    with_db!(s.writer(), |pool| sqlx::query(
        "update jobs set due_at = due_at - 3600000, lease_until = lease_until - 3600000 \
         where kind = $1 and job_key = $2"
    )
    .bind(JobKind::Probe.as_str())
    .bind(key)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
}

fn keys(jobs: &[Job]) -> Vec<&str> {
    jobs.iter().map(|j| j.key.as_str()).collect()
}

async fn scheduling_moves_a_timer_and_cancelling_removes_what_it_names(db: TestDb) {
    let s = db.services();
    let t = now_ms();
    schedule(&s, "a:1", t + 1_000, json!({"n": 1})).await;
    schedule(&s, "a:1", t + 2_000, json!({"n": 2})).await;
    assert_eq!(count(&s, "select count(*) from jobs where kind = 'probe'").await, 1);
    assert_eq!(state(&s, "a:1").await.unwrap().due_at, t + 2_000);

    // A claimed job that is scheduled again is a new timer: no lease, no attempts.
    schedule(&s, "b:1", t - 10, json!({})).await;
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    assert_eq!(keys(&claimed), ["b:1"]);
    assert_eq!(claimed[0].attempts, 0, "runs before this one");
    assert_eq!(state(&s, "b:1").await.unwrap().attempts, 1);
    schedule(&s, "b:1", t + 5_000, json!({"moved": true})).await;
    let moved = state(&s, "b:1").await.unwrap();
    assert_eq!((moved.due_at, moved.lease_until, moved.attempts), (t + 5_000, None, 0));

    // A schedule rolled back with its transaction leaves nothing.
    let mut tx = s.db().begin().await.unwrap();
    jobs::schedule(&mut tx, None, JobKind::Probe, "rolled:back", t, &json!({}))
        .await
        .unwrap();
    drop(tx);
    assert_eq!(state(&s, "rolled:back").await, None);

    // Cancelling names one kind and key, or one prefix; `_` and `%` are literal.
    for key in ["c1:x", "c1:y", "c10:z", "a_b:1", "axb:1", "50%:1", "50x:1"] {
        schedule(&s, key, t + 60_000, json!({})).await;
    }
    s.schedule_job(None, JobKind::NoAnswer, "c1:x", t + 60_000, &json!({}))
        .await
        .unwrap();
    let mut tx = s.db().begin().await.unwrap();
    jobs::cancel(&mut tx, JobKind::Probe, "a:1").await.unwrap();
    jobs::cancel_prefix(&mut tx, JobKind::Probe, "c1:").await.unwrap();
    jobs::cancel_prefix(&mut tx, JobKind::Probe, "a_b").await.unwrap();
    jobs::cancel_prefix(&mut tx, JobKind::Probe, "50%").await.unwrap();
    tx.commit().await.unwrap();
    let left: Vec<String> = with_db!(s.db(), |pool| sqlx::query_scalar(
        "select kind || ' ' || job_key from jobs order by kind, job_key"
    )
    .fetch_all(pool)
    .await)
    .unwrap();
    assert_eq!(
        left,
        [
            "probe 50x:1",
            "probe axb:1",
            "probe b:1",
            "probe c10:z",
            "routing.no_answer c1:x"
        ]
    );
}

async fn claims_take_due_jobs_oldest_first_under_a_lease(db: TestDb) {
    let s = db.services();
    let t = now_ms();
    schedule(&s, "second", t - 2_000, json!({"n": 2})).await;
    schedule(&s, "third", t - 1_000, json!({})).await;
    schedule(&s, "first", t - 3_000, json!({})).await;
    schedule(&s, "future", t + 60_000, json!({})).await;

    let claimed = s.claim_jobs(2, LEASE).await.unwrap();
    assert_eq!(keys(&claimed), ["first", "second"]);
    assert_eq!(claimed[1].payload, json!({"n": 2}));
    assert_eq!(claimed[1].due_at, t - 2_000);
    assert_eq!(claimed[1].job_kind(), Some(JobKind::Probe));
    let leased = state(&s, "first").await.unwrap();
    assert!(leased.lease_until.unwrap() >= t + LEASE, "{leased:?}");
    assert_eq!(keys(&s.claim_jobs(10, LEASE).await.unwrap()), ["third"]);
    // Leased jobs and future ones are not claimed.
    assert!(s.claim_jobs(10, LEASE).await.unwrap().is_empty());
    assert!(s.claim_jobs(0, LEASE).await.unwrap().is_empty());

    for job in &claimed {
        assert!(s.complete_job(job).await.unwrap());
    }
    assert_eq!(state(&s, "first").await, None);
    assert!(state(&s, "future").await.is_some());
}

async fn a_lapsed_lease_is_claimed_again_and_only_the_later_claim_finishes_it(db: TestDb) {
    let s = db.services();
    schedule(&s, "slow", now_ms() - 1, json!({})).await;
    let first = s.claim_jobs(10, LEASE).await.unwrap();
    assert_eq!(keys(&first), ["slow"]);
    assert!(s.claim_jobs(10, LEASE).await.unwrap().is_empty(), "the lease holds");
    an_hour_passes(&s, "slow").await;
    let second = s.claim_jobs(10, LEASE).await.unwrap();
    assert_eq!(keys(&second), ["slow"], "the lease lapsed");
    assert_eq!(second[0].attempts, 1, "the first run counts");

    // The first runner finishing late changes nothing: the job is the second's.
    assert!(!s.complete_job(&first[0]).await.unwrap());
    assert!(!s.fail_job(&first[0], "late", Some(now_ms() + 1_000)).await.unwrap());
    assert!(!s.defer_job(&first[0], PARKED).await.unwrap());
    let held = state(&s, "slow").await.unwrap();
    assert!(held.lease_until.unwrap() > now_ms(), "the second claim's lease");
    assert_eq!((held.attempts, held.last_error), (2, None));
    assert!(s.complete_job(&second[0]).await.unwrap());
    assert_eq!(state(&s, "slow").await, None);
}

async fn completing_keeps_a_job_that_was_scheduled_again_meanwhile(db: TestDb) {
    let s = db.services();
    let t = now_ms();
    schedule(&s, "recurring", t - 1, json!({})).await;
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    // The handler schedules its next run, then the run completes.
    schedule(&s, "recurring", t + 3_600_000, json!({})).await;
    assert!(!s.complete_job(&claimed[0]).await.unwrap());
    let next = state(&s, "recurring").await.unwrap();
    assert_eq!((next.due_at, next.lease_until, next.attempts), (t + 3_600_000, None, 0));

    // Even to the same due time: the schedule freed the lease.
    schedule(&s, "same", t - 1, json!({})).await;
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    schedule(&s, "same", t - 1, json!({})).await;
    assert!(!s.complete_job(&claimed[0]).await.unwrap());
    assert!(!s.fail_job(&claimed[0], "boom", None).await.unwrap());
    assert_eq!(keys(&s.claim_jobs(10, LEASE).await.unwrap()), ["same"], "it runs again");
}

async fn a_failed_run_is_retried_later_and_dropped_when_spent(db: TestDb) {
    let s = db.services();
    schedule(&s, "flaky", now_ms() - 1, json!({"secret": "never logged"})).await;
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    let retry_at = now_ms() + 60_000;
    assert!(s
        .fail_job(&claimed[0], "the receiver said no", Some(retry_at))
        .await
        .unwrap());
    let failed = state(&s, "flaky").await.unwrap();
    assert_eq!(
        failed,
        JobState {
            due_at: retry_at,
            lease_until: None,
            attempts: 1,
            last_error: Some("the receiver said no".into())
        }
    );
    assert!(s.claim_jobs(10, LEASE).await.unwrap().is_empty(), "not yet due");
    an_hour_passes(&s, "flaky").await;
    let again = s.claim_jobs(10, LEASE).await.unwrap();
    assert_eq!(again[0].attempts, 1);
    assert!(s.fail_job(&again[0], &"x".repeat(10_000), None).await.unwrap());
    assert_eq!(state(&s, "flaky").await, None, "spent: dropped");

    // Deferring puts a job back without counting the run.
    schedule(&s, "later", now_ms() - 1, json!({})).await;
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    assert!(s.defer_job(&claimed[0], PARKED).await.unwrap());
    let parked = state(&s, "later").await.unwrap();
    assert_eq!((parked.due_at, parked.lease_until, parked.attempts), (PARKED, None, 0));
    assert!(s.claim_jobs(10, LEASE).await.unwrap().is_empty());
}

async fn ensuring_a_recurring_job_adds_it_once_and_moves_nothing(db: TestDb) {
    let s = db.services();
    let t = now_ms();
    assert!(s.ensure_job(JobKind::Retention, "instance", t + 1_000).await.unwrap());
    assert!(!s.ensure_job(JobKind::Retention, "instance", t).await.unwrap());
    let kept = s.job_state(JobKind::Retention, "instance").await.unwrap().unwrap();
    assert_eq!(kept.due_at, t + 1_000);
    // Freeing leases (SQLite at start) makes a claimed job due again at once.
    schedule(&s, "held", t - 1, json!({})).await;
    assert_eq!(s.claim_jobs(10, LEASE).await.unwrap().len(), 1);
    assert_eq!(s.release_job_leases().await.unwrap(), 1);
    assert_eq!(keys(&s.claim_jobs(10, LEASE).await.unwrap()), ["held"]);
}

async fn every_pending_mail_has_its_job(db: TestDb) {
    let s = db.services();
    let tenant = s
        .create_tenant(
            NewTenant {
                name: Some("Mail".into()),
                ..Default::default()
            },
            &Actor::system("tests"),
        )
        .await
        .unwrap()
        .id;
    let t = now_ms();
    // Mail written before it had jobs: two pending, one sent.
    for (id, status) in [("m-pending", "PENDING"), ("m-later", "PENDING"), ("m-sent", "SENT")] {
        let next = if id == "m-later" { t + 60_000 } else { t - 5 };
        with_db!(s.writer(), |pool| sqlx::query(
            "insert into mail_outbox (id, tenant_id, to_address, subject, body, status, next_attempt_at, created_at) \
             values ($1, $2, 'a@example.com', 's', 'b', $3, $4, $4)"
        )
        .bind(id)
        .bind(&tenant)
        .bind(status)
        .bind(next)
        .execute(pool)
        .await
        .map(|_| ()))
        .unwrap();
    }
    assert_eq!(s.schedule_pending_mail().await.unwrap(), 2);
    let mail_job = |key: &'static str| {
        let s = s.clone();
        async move { s.job_state(JobKind::Mail, key).await.unwrap() }
    };
    assert_eq!(mail_job("m-pending").await.unwrap().due_at, t - 5);
    assert_eq!(mail_job("m-later").await.unwrap().due_at, t + 60_000);
    assert_eq!(mail_job("m-sent").await, None);

    // Without SMTP the runner parks the job; a start with SMTP makes it due
    // again, and leaves jobs that are not parked alone.
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    assert_eq!(keys(&claimed), ["m-pending"]);
    assert_eq!(claimed[0].tenant_id.as_deref(), Some(tenant.as_str()));
    s.defer_job(&claimed[0], PARKED).await.unwrap();
    s.schedule_job(None, JobKind::Mail, "m-later", t + 90_000, &json!({}))
        .await
        .unwrap();
    assert_eq!(s.schedule_pending_mail().await.unwrap(), 1, "only the parked one");
    assert_eq!(mail_job("m-pending").await.unwrap().due_at, t - 5);
    assert_eq!(mail_job("m-later").await.unwrap().due_at, t + 90_000);

    // An attempt that fails moves the job to the mail's retry.
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    let mail = s.start_mail_attempt(&claimed[0].key).await.unwrap().unwrap();
    assert_eq!(mail.mail.attempts, 1);
    s.finish_mail(&mail, Err("451 try later".into())).await.unwrap();
    let retry = mail_job("m-pending").await.unwrap();
    assert!(
        retry.due_at >= now_ms() + 25_000 && retry.lease_until.is_none(),
        "{retry:?}"
    );
    assert!(!s.complete_job(&claimed[0]).await.unwrap(), "the retry stays");
    // "Retry now" makes it due at once.
    s.retry_mail_now(&tenant, "m-pending").await.unwrap();
    assert!(mail_job("m-pending").await.unwrap().due_at <= now_ms());
    let claimed = s.claim_jobs(10, LEASE).await.unwrap();
    let mail = s.start_mail_attempt(&claimed[0].key).await.unwrap().unwrap();
    s.finish_mail(&mail, Ok(())).await.unwrap();
    assert!(s.complete_job(&claimed[0]).await.unwrap());
    assert!(s.start_mail_attempt("m-pending").await.unwrap().is_none(), "sent");
    assert_eq!(
        count(&s, "select attempts from mail_outbox where id = 'm-pending'").await,
        2
    );
}

/// Claims in a loop until nothing is due, completing what it got; returns the
/// ids it handled.
async fn drain(s: Services) -> Vec<String> {
    let mut handled = Vec::new();
    loop {
        let claimed = s.claim_jobs(8, LEASE).await.unwrap();
        if claimed.is_empty() {
            return handled;
        }
        for job in claimed {
            assert!(s.complete_job(&job).await.unwrap(), "completed by its claimer");
            handled.push(job.id);
        }
    }
}

async fn concurrent_claimers_never_get_the_same_job(db: TestDb) {
    const JOBS: usize = 3_000;
    let s = db.services();
    let t = now_ms();
    let mut tx = s.db().begin().await.unwrap();
    for n in 0..JOBS {
        let key = format!("job:{n}");
        jobs::schedule(&mut tx, None, JobKind::Probe, &key, t - (n % 50) as i64, &json!({}))
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    // On PostgreSQL two instances (each its own pool); SQLite has one instance by
    // design, whose claimers queue for its one writer.
    let mut services = vec![s.clone()];
    if s.db().backend() == Backend::Postgres {
        services.push(Services::new(Db::connect(&db.url).await.unwrap()));
    }
    let claimers: Vec<_> = (0..4)
        .map(|n| tokio::spawn(drain(services[n % services.len()].clone())))
        .collect();
    let mut seen = HashMap::<String, usize>::new();
    let mut per_claimer = Vec::new();
    for claimer in claimers {
        let handled = claimer.await.unwrap();
        per_claimer.push(handled.len());
        for id in handled {
            *seen.entry(id).or_default() += 1;
        }
    }
    let twice: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "claimed twice: {twice:?}");
    assert_eq!(seen.len(), JOBS, "each job handled once ({per_claimer:?})");
    let ids: HashSet<&String> = seen.keys().collect();
    assert_eq!(ids.len(), JOBS);
    assert_eq!(count(&s, "select count(*) from jobs").await, 0);
}

backend_tests!(
    scheduling_moves_a_timer_and_cancelling_removes_what_it_names,
    claims_take_due_jobs_oldest_first_under_a_lease,
    a_lapsed_lease_is_claimed_again_and_only_the_later_claim_finishes_it,
    completing_keeps_a_job_that_was_scheduled_again_meanwhile,
    a_failed_run_is_retried_later_and_dropped_when_spent,
    ensuring_a_recurring_job_adds_it_once_and_moves_nothing,
    every_pending_mail_has_its_job,
    concurrent_claimers_never_get_the_same_job,
);
