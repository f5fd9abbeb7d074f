//! The job runner (`rapport_server::workers`): in process, it retries a failing
//! job on its schedule and then drops it, fires timers once they are due, keeps
//! its recurring jobs and parks mail without SMTP; with real `rapport`
//! processes, a job that fell due while the process was SIGKILLed fires once
//! after the restart, and two instances on one PostgreSQL run each due job once.
//!
//! The two process scenarios are harnesses ([`fires_once_across_sigkill`],
//! [`runs_once_on_two_instances`]) that take what to schedule and how to count
//! what fired, so any job kind with an effect outside the process can use them;
//! here it is mail through a real SMTP receiver.

use std::{collections::HashMap, future::Future, time::Duration};

use rapport_core::{
    appointments::AppointmentIn,
    backend_tests,
    backoff::Backoff,
    db::Backend,
    ids::TenantId,
    jobs::{JobKind, PARKED},
    tenants::NewTenant,
    testing::TestDb,
    time::now_ms,
    with_db, Services,
};
use rapport_server::workers::{self, Fired, Handlers, RunnerSettings};
use serde_json::json;
use tokio::{sync::mpsc, time::Instant};

use crate::{instance::Instance, smtp::SmtpReceiver, utils::actor};

/// How long nothing more may fire after the expected count was reached.
const SETTLE: Duration = Duration::from_millis(1500);

/// Waits up to `within` for `fired()` to reach `expected`, then for [`SETTLE`],
/// and checks that it is exactly `expected`: everything fired, nothing twice.
async fn fired_exactly<C, CF>(fired: &C, expected: usize, within: Duration)
where
    C: Fn() -> CF,
    CF: Future<Output = usize>,
{
    let deadline = Instant::now() + within;
    loop {
        let n = fired().await;
        if n >= expected {
            break;
        }
        assert!(Instant::now() < deadline, "{n} of {expected} fired within {within:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE).await;
    assert_eq!(fired().await, expected, "nothing fires twice");
}

/// Harness: starts `rapport` on `db` with `env`, SIGKILLs it, lets `arm`
/// schedule work while no process runs (due at once, or soon: it returns when
/// the last is due), waits until that is due, starts `rapport` again, and checks
/// that `fired()` grows by exactly `expected`.
pub async fn fires_once_across_sigkill<A, AF, C, CF>(
    db: &TestDb,
    env: &[(&str, String)],
    arm: A,
    fired: C,
    expected: usize,
) where
    A: FnOnce(Services) -> AF,
    AF: Future<Output = i64>,
    C: Fn() -> CF,
    CF: Future<Output = usize>,
{
    let mut first = Instance::start(db, env);
    let health = reqwest::get(format!("{}/health", first.base)).await.unwrap();
    assert_eq!(health.status(), 200, "it served before it was killed");
    first.kill();
    let before = fired().await;
    let last_due = arm(db.services()).await;
    let wait = last_due - now_ms();
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64 + 50)).await;
    }
    assert_eq!(fired().await, before, "nothing runs while no process does");
    let second = Instance::start(db, env);
    let fired = &fired;
    let total = move || async move { fired().await - before };
    fired_exactly(&total, expected, Duration::from_secs(30)).await;
    drop(second);
}

/// Harness: on PostgreSQL, starts two `rapport` processes on `db` with `env`,
/// lets `arm` schedule work due at once, and checks that `fired()` reaches
/// exactly `expected`. SQLite has one instance by design: nothing to check.
pub async fn runs_once_on_two_instances<A, AF, C, CF>(
    db: &TestDb,
    env: &[(&str, String)],
    arm: A,
    fired: C,
    expected: usize,
) where
    A: FnOnce(Services) -> AF,
    AF: Future<Output = ()>,
    C: Fn() -> CF,
    CF: Future<Output = usize>,
{
    if db.db.backend() != Backend::Postgres {
        return;
    }
    let one = Instance::start(db, env);
    let two = Instance::start(db, env);
    arm(db.services()).await;
    fired_exactly(&fired, expected, Duration::from_secs(60)).await;
    drop((one, two));
}

async fn tenant(services: &Services) -> TenantId {
    services
        .create_tenant(
            NewTenant {
                name: Some("Jobs".into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .id
}

/// An appointment inviting `attendees`: one mail each, with its job due now.
/// Returns the mail ids.
async fn invite(services: &Services, tenant_id: &TenantId, attendees: Vec<String>) -> Vec<String> {
    let input: AppointmentIn = serde_json::from_value(json!({
        "title": "Durable",
        "date": "2030-03-04T09:30:00Z",
        "attendees": attendees,
        "sendInviteEmail": true,
    }))
    .unwrap();
    let appointment = services.create_appointment(tenant_id, input, &actor()).await.unwrap();
    with_db!(services.db(), |pool| sqlx::query_scalar(
        "select id from mail_outbox where about = $1 order by id"
    )
    .bind(format!("appointment:{}", appointment.id))
    .fetch_all(pool)
    .await)
    .unwrap()
}

/// `(status, attempts)` of every mail.
async fn outbox(services: &Services) -> Vec<(String, i64)> {
    with_db!(services.db(), |pool| sqlx::query_as(
        "select status, attempts from mail_outbox"
    )
    .fetch_all(pool)
    .await)
    .unwrap()
}

async fn mail_due_while_killed_is_sent_once_after_restart(db: TestDb) {
    let smtp = SmtpReceiver::start().await;
    let env = [("RAPPORT_SMTP_URL", smtp.url.clone())];
    let services = db.services();
    let tenant_id = tenant(&services).await;
    let arm = |services: Services| async move {
        // One mail due at once, one whose job falls due a moment later.
        invite(&services, &tenant_id, vec!["now@example.com".into()]).await;
        let soon = invite(&services, &tenant_id, vec!["soon@example.com".into()]).await;
        let due = now_ms() + 700;
        services
            .schedule_job(Some(&tenant_id), JobKind::Mail, &soon[0], due, &json!({}))
            .await
            .unwrap();
        due
    };
    let receiver = &smtp;
    let delivered = move || async move { receiver.wait_for(0).await.len() };
    fires_once_across_sigkill(&db, &env, arm, delivered, 2).await;
    let mut to: Vec<String> = smtp.wait_for(2).await.iter().flat_map(|d| d.to.clone()).collect();
    to.sort();
    assert_eq!(to, ["now@example.com", "soon@example.com"]);
    assert_eq!(
        outbox(&services).await,
        [("SENT".to_string(), 1), ("SENT".to_string(), 1)]
    );
}

async fn two_instances_send_each_mail_once(db: TestDb) {
    const MAILS: usize = 100;
    let smtp = SmtpReceiver::start().await;
    let env = [("RAPPORT_SMTP_URL", smtp.url.clone())];
    let services = db.services();
    let tenant_id = tenant(&services).await;
    let arm = |services: Services| async move {
        let attendees = (0..MAILS).map(|n| format!("a{n}@example.com")).collect();
        assert_eq!(invite(&services, &tenant_id, attendees).await.len(), MAILS);
    };
    let receiver = &smtp;
    let delivered = move || async move { receiver.wait_for(0).await.len() };
    runs_once_on_two_instances(&db, &env, arm, delivered, MAILS).await;
    if db.db.backend() != Backend::Postgres {
        return;
    }
    let mut per_recipient: HashMap<String, usize> = HashMap::new();
    for mail in smtp.wait_for(MAILS).await {
        for to in mail.to {
            *per_recipient.entry(to).or_default() += 1;
        }
    }
    assert_eq!(per_recipient.len(), MAILS);
    assert!(per_recipient.values().all(|n| *n == 1), "{per_recipient:?}");
    assert!(
        outbox(&services).await.iter().all(|(s, a)| s == "SENT" && *a == 1),
        "each mail sent on its first attempt"
    );
}

/// Runs of probe jobs the observer heard, per key: `(fired at, failed)`.
fn heard(rx: &mut mpsc::UnboundedReceiver<Fired>, runs: &mut HashMap<String, Vec<(i64, bool)>>) {
    while let Ok(fired) = rx.try_recv() {
        runs.entry(fired.job.key.clone())
            .or_default()
            .push((fired.at, fired.failed));
    }
}

async fn the_runner_retries_then_drops_fires_on_time_and_keeps_its_recurring_jobs(db: TestDb) {
    let services = db.services();
    let tenant_id = tenant(&services).await;
    let mail = invite(&services, &tenant_id, vec!["kept@example.com".into()]).await;
    let t = now_ms();
    for (key, due, payload) in [
        ("on-time", t + 400, json!({})),
        ("flaky", t, json!({"fail": 2})),
        ("hopeless", t, json!({"fail": 99})),
    ] {
        services
            .schedule_job(None, JobKind::Probe, key, due, &payload)
            .await
            .unwrap();
    }
    let (observer, mut rx) = mpsc::unbounded_channel();
    let handlers = Handlers {
        mail: None,
        retention: Some(Duration::from_secs(30 * 86_400)),
        presence_timeout_ms: Some(180_000),
        probe: Some(observer),
    };
    let settings = RunnerSettings {
        backoff: Backoff::new(vec![Duration::from_millis(100), Duration::from_millis(100)]),
        ..RunnerSettings::default()
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let runner = workers::spawn(services.clone(), handlers, settings, stopped);

    let mut runs = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        heard(&mut rx, &mut runs);
        let done = |key: &str, n: usize| runs.get(key).is_some_and(|r: &Vec<_>| r.len() >= n);
        if done("on-time", 1) && done("flaky", 3) && done("hopeless", 3) {
            break;
        }
        assert!(Instant::now() < deadline, "runs so far: {runs:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(SETTLE).await;
    heard(&mut rx, &mut runs);

    let on_time = &runs["on-time"];
    assert_eq!(on_time.len(), 1, "{on_time:?}");
    assert!(on_time[0].0 >= t + 400 && !on_time[0].1, "fired once due: {on_time:?}");
    let failed = |key: &str| runs[key].iter().map(|(_, f)| *f).collect::<Vec<_>>();
    assert_eq!(failed("flaky"), [true, true, false], "retried until it worked");
    assert_eq!(failed("hopeless"), [true, true, true], "three runs, then dropped");
    for key in ["on-time", "flaky", "hopeless"] {
        assert_eq!(services.job_state(JobKind::Probe, key).await.unwrap(), None, "{key}");
    }

    // Recurring jobs were added, ran, and wait for their next run.
    let retention = services
        .job_state(JobKind::Retention, "instance")
        .await
        .unwrap()
        .unwrap();
    assert!(retention.due_at > now_ms() + 3_000_000, "{retention:?}");
    let presence = services
        .job_state(JobKind::Presence, "instance")
        .await
        .unwrap()
        .unwrap();
    assert!(
        presence.due_at > t + 20_000 && presence.lease_until.is_none(),
        "{presence:?}"
    );
    // Without SMTP the mail stays pending, its job parked, no attempt counted.
    let parked = services.job_state(JobKind::Mail, &mail[0]).await.unwrap().unwrap();
    assert_eq!((parked.due_at, parked.attempts), (PARKED, 0));
    assert_eq!(outbox(&services).await, [("PENDING".to_string(), 0)]);

    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(15), runner)
        .await
        .expect("the runner stops when asked")
        .unwrap();
}

/// `RAPPORT_RETENTION=0` keeps finished work, but the retention job still
/// runs: recordings follow each workspace's own retention.
async fn retention_runs_when_the_instance_keeps_everything(db: TestDb) {
    let services = db.services();
    let handlers = Handlers {
        mail: None,
        retention: None,
        presence_timeout_ms: None,
        probe: None,
    };
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let runner = workers::spawn(services.clone(), handlers, RunnerSettings::default(), stopped);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        // Ran, and waits for its next run an hour on.
        let job = services.job_state(JobKind::Retention, "instance").await.unwrap();
        if job.is_some_and(|j| j.due_at > now_ms() + 3_000_000) {
            break;
        }
        assert!(Instant::now() < deadline, "the retention job ran");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.send(true).unwrap();
    tokio::time::timeout(Duration::from_secs(15), runner)
        .await
        .expect("the runner stops when asked")
        .unwrap();
}

backend_tests!(
    retention_runs_when_the_instance_keeps_everything,
    mail_due_while_killed_is_sent_once_after_restart,
    two_instances_send_each_mail_once,
    the_runner_retries_then_drops_fires_on_time_and_keeps_its_recurring_jobs,
);
