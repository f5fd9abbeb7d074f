//! Webhook delivery across process deaths and instances, with real `rapport`
//! processes: SIGKILL in the middle of a stream loses no event and re-sends only
//! what was in flight, as the same attempt; two instances on one PostgreSQL never
//! make the same attempt twice.

use std::{
    collections::{HashMap, HashSet},
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use rapport_core::{audit::Actor, backend_tests, ids::TenantId, testing::TestDb, webhooks::WebhookIn, Services};
use serde_json::json;

use crate::receiver::Receiver;

/// A running `rapport serve`; killed with SIGKILL when dropped.
struct Instance {
    child: Child,
    base: String,
}

impl Instance {
    fn start(db: &TestDb) -> Instance {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rapport"))
            .args(["serve", "--addr", "127.0.0.1:0"])
            .env("DATABASE_URL", &db.url)
            .env("RAPPORT_DATA_DIR", std::env::temp_dir())
            .env("RAPPORT_ADMIN_EMAIL", "admin@rapport.test")
            .env("RAPPORT_ADMIN_PASSWORD", "admin-password")
            .env("RAPPORT_WEBHOOK_ALLOW_PRIVATE_NETWORKS", "true")
            .env("RAPPORT_WEBHOOK_RETRY_SCHEDULE", "200ms,400ms,800ms")
            // Short, so a killed PostgreSQL instance's claims come back quickly.
            .env("RAPPORT_WEBHOOK_LEASE", "3s")
            .env("RAPPORT_RATE_LIMIT_PER_TOKEN", "0")
            .env("RAPPORT_RATE_LIMIT_PER_IP", "0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut line = String::new();
        while Instant::now() < deadline && !line.contains("Rapport is running") {
            line.clear();
            if stdout.read_line(&mut line).unwrap() == 0 {
                break;
            }
        }
        let addr = line
            .split("listening on ")
            .nth(1)
            .and_then(|s| s.split(')').next())
            .unwrap_or_else(|| panic!("no banner: {line}"))
            .to_string();
        // Keep draining stdout so the process never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while stdout.read_line(&mut sink).unwrap_or(0) > 0 {
                sink.clear();
            }
        });
        Instance {
            child,
            base: format!("http://{addr}"),
        }
    }

    fn kill(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A tenant with an API key and a subscription of `receiver` to `customer.created`.
async fn tenant_listening(services: &Services, receiver: &Receiver) -> (TenantId, String) {
    let actor = Actor::system("tests");
    let tenant = services
        .create_tenant(
            rapport_core::tenants::NewTenant {
                name: Some("Durable".into()),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();
    let key = services.create_api_key(&tenant.id, "tests", &actor).await.unwrap();
    services
        .create_webhook(
            &tenant.id,
            WebhookIn {
                url: Some(receiver.url.clone()),
                event_types: Some(vec!["customer.created".into()]),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();
    (tenant.id, key.token)
}

async fn create_customers(base: &str, token: &str, range: std::ops::Range<usize>) {
    let client = reqwest::Client::new();
    for n in range {
        let response = client
            .post(format!("{base}/rest/v1/customer"))
            .bearer_auth(token)
            .json(&json!({ "externalId": format!("c{n}") }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 201);
    }
}

/// The ids of every event stored for the tenant.
async fn event_ids(db: &TestDb, tenant_id: &str) -> HashSet<String> {
    let ids: Vec<String> = rapport_core::with_db!(&db.db, |pool| sqlx::query_scalar(
        "select id from events where tenant_id = $1"
    )
    .bind(tenant_id)
    .fetch_all(pool)
    .await)
    .unwrap();
    ids.into_iter().collect()
}

/// How long the receiver takes to answer.
const ANSWER: Duration = Duration::from_millis(300);
/// How soon after its answer an attempt is recorded, at most, for this test: the
/// worker writes a batch as soon as the writer is free, within milliseconds; this
/// leaves room for a slow, shared machine.
const RECORDED_WITHIN: Duration = Duration::from_millis(250);

async fn sigkill_mid_stream_loses_no_event(db: TestDb) {
    // Slow answers keep deliveries in flight when the process dies.
    let receiver = Receiver::start_with_delay(ANSWER).await;
    let mut first = Instance::start(&db);
    let (tenant_id, token) = tenant_listening(&db.services(), &receiver).await;
    create_customers(&first.base, &token, 0..60).await;
    receiver.wait_for(1, Duration::from_secs(30)).await;
    let killed_at = Instant::now();
    first.kill();
    let unfinished = db.services().unfinished_deliveries().await.unwrap();
    assert!(unfinished > 0, "the kill landed mid-stream");

    let second = Instance::start(&db);
    create_customers(&second.base, &token, 60..100).await;
    let expected = event_ids(&db, &tenant_id).await;
    assert_eq!(expected.len(), 100);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got: HashSet<String> = receiver
            .received()
            .iter()
            .map(|r| r.header("webhook-id").to_string())
            .collect();
        if expected.is_subset(&got) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{} of 100 events never arrived",
            expected.difference(&got).count()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Every id the receiver saw is an original event id (retries reuse it), and
    // a re-send after the crash is the same attempt (every answer was 200: 1).
    let mut seen: HashMap<String, Vec<std::time::Instant>> = HashMap::new();
    for r in receiver.received() {
        assert!(expected.contains(r.header("webhook-id")));
        assert_eq!(
            r.header("rapport-attempt"),
            "1",
            "a crash re-send counts as the same attempt"
        );
        seen.entry(r.header("webhook-id").to_string()).or_default().push(r.at);
    }
    // Only what was really in flight at the kill went out again: an event answered
    // before it had its attempt recorded, and was not sent twice.
    for (id, arrivals) in &seen {
        if arrivals.len() > 1 {
            let answered = arrivals[0] + ANSWER;
            assert!(
                answered + RECORDED_WITHIN > killed_at,
                "{id} was answered {:?} before the kill and sent again",
                killed_at.saturating_duration_since(answered)
            );
        }
    }
    drop(second);
}

async fn two_instances_on_postgres_attempt_each_delivery_once(db: TestDb) {
    if db.db.backend() != rapport_core::db::Backend::Postgres {
        // SQLite has one instance by design.
        return;
    }
    let receiver = Receiver::start_with_delay(Duration::from_millis(5)).await;
    let one = Instance::start(&db);
    let two = Instance::start(&db);
    let (tenant_id, token) = tenant_listening(&db.services(), &receiver).await;
    tokio::join!(
        create_customers(&one.base, &token, 0..150),
        create_customers(&two.base, &token, 150..300),
    );
    let expected = event_ids(&db, &tenant_id).await;
    assert_eq!(expected.len(), 300);
    let got = receiver.wait_for(300, Duration::from_secs(60)).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let got_later = receiver.received();
    assert_eq!(got_later.len(), got.len().max(300), "no late duplicates");
    let mut per_id: HashMap<String, usize> = HashMap::new();
    for r in &got_later {
        *per_id.entry(r.header("webhook-id").to_string()).or_default() += 1;
    }
    let twice: Vec<_> = per_id.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "attempted more than once: {twice:?}");
    assert_eq!(per_id.len(), 300);
    // Attempts are recorded just after the receiver answers; wait for the last ones.
    let deadline = Instant::now() + Duration::from_secs(10);
    let attempts = loop {
        let attempts: i64 = rapport_core::with_db!(&db.db, |pool| sqlx::query_scalar(
            "select count(*) from webhook_attempts where tenant_id = $1"
        )
        .bind(&tenant_id)
        .fetch_one(pool)
        .await)
        .unwrap();
        if attempts >= 300 || Instant::now() > deadline {
            break attempts;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(attempts, 300, "one recorded attempt per delivery");
    drop((one, two));
}

backend_tests!(
    sigkill_mid_stream_loses_no_event,
    two_instances_on_postgres_attempt_each_delivery_once
);
