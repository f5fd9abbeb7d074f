//! Webhook delivery benchmark (run: `cargo xtask bench`, or
//! `cargo bench -p rapport-server --bench webhooks`).
//!
//! On SQLite, against a local HTTP receiver, in one run:
//! - **throughput**: deliveries per second draining a backlog of queued events
//!   (claim, sign, POST, record), against a baseline of the same HTTP client posting
//!   the same bodies straight to the receiver with the same concurrency;
//! - **latency**: enqueue-to-first-attempt p50 and p99 with events created through the
//!   service layer at a fixed rate, against the baseline's request round trip at the
//!   same rate.
//!
//! - **isolation**: the same latency while another tenant's 20 endpoints fail (10
//!   names that do not resolve, 10 refused ports) with a backlog of 100,000
//!   deliveries, as a ratio to the latency without it; and how long a claim takes
//!   behind that backlog.
//!
//! Figures are reported with ratios to the baseline measured in the same run, since
//! the machines are shared and noisy. Sizes can be set with `BENCH_BACKLOG`,
//! `BENCH_RATE` (events/s), `BENCH_SECONDS` and `BENCH_FAILING_BACKLOG`.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{body::Bytes, extract::State, routing::post, Router};
use rapport_core::{
    audit::Actor,
    customers::CustomerIn,
    db::Db,
    events::{self, EventType},
    ids::TenantId,
    tenants::NewTenant,
    webhooks::{deliveries::RetryPolicy, WebhookIn},
    Services,
};
use rapport_server::webhooks::{self, WorkerSettings};
use tokio::sync::watch;

/// Arrival time per customer id (from the body), and a count.
#[derive(Default)]
struct Arrivals {
    at: Mutex<HashMap<String, Instant>>,
    count: std::sync::atomic::AtomicUsize,
}

async fn receive(State(arrivals): State<Arc<Arrivals>>, body: Bytes) -> &'static str {
    arrivals.count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&body) {
        if let Some(id) = v.get("id").and_then(|i| i.as_str()) {
            arrivals
                .at
                .lock()
                .unwrap()
                .entry(id.to_string())
                .or_insert_with(Instant::now);
        }
    }
    "ok"
}

async fn start_receiver() -> (String, Arc<Arrivals>) {
    let arrivals = Arc::new(Arrivals::default());
    let app = Router::new().route("/hook", post(receive)).with_state(arrivals.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, arrivals)
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[path = "support/stats.rs"]
mod stats;
use stats::{ms, percentile};

const CONCURRENCY: usize = 256;

#[tokio::main]
async fn main() {
    let backlog = env_or("BENCH_BACKLOG", 20_000) as usize;
    let rate = env_or("BENCH_RATE", 100);
    let seconds = env_or("BENCH_SECONDS", 10);
    let failing_backlog = env_or("BENCH_FAILING_BACKLOG", 100_000) as usize;
    let (url, arrivals) = start_receiver().await;
    let body = serde_json::json!({"id": "baseline", "email": null, "firstName": "Bench", "lastName": null,
        "gender": null, "externalId": null, "assignedUser": null, "assignedTeam": null,
        "createdAt": "2026-11-21T10:00:00Z", "updatedAt": "2026-11-21T10:00:00Z"})
    .to_string();

    // Baseline throughput: the worker's HTTP client, signing and POSTing the same body.
    let client = webhooks::client(rapport_server::webhooks::guard::AllowedNetworks::All);
    let signer = standardwebhooks::Webhook::new(&rapport_core::webhooks::new_secret()).unwrap();
    let started = Instant::now();
    let slots = Arc::new(tokio::sync::Semaphore::new(CONCURRENCY));
    let mut tasks = Vec::with_capacity(backlog);
    for n in 0..backlog {
        let permit = slots.clone().acquire_owned().await.unwrap();
        let (client, url, body) = (client.clone(), url.clone(), body.clone());
        let signature = signer
            .sign(&format!("msg_{n}"), chrono::Utc::now().timestamp(), body.as_bytes())
            .unwrap();
        tasks.push(tokio::spawn(async move {
            let r = client
                .post(url)
                .header("webhook-signature", signature)
                .body(body)
                .send()
                .await;
            drop(permit);
            r.map(|r| r.status().is_success()).unwrap_or(false)
        }));
    }
    for t in tasks {
        assert!(t.await.unwrap());
    }
    let baseline_rate = backlog as f64 / started.elapsed().as_secs_f64();

    // Baseline latency: one request per tick at the fixed rate.
    let mut baseline_latency = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    for _ in 0..(rate * seconds) {
        tick.tick().await;
        let t0 = Instant::now();
        client.post(&url).body(body.clone()).send().await.unwrap();
        baseline_latency.push(t0.elapsed());
    }
    baseline_latency.sort();

    // Rapport: SQLite in a temporary directory, the real worker.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::connect(&format!("sqlite://{}/bench.db", dir.path().display()))
        .await
        .unwrap();
    db.migrate().await.unwrap();
    let services = Services::new(db);
    let actor = Actor::system("bench");
    let tenant = services
        .create_tenant(
            NewTenant {
                name: Some("Bench".into()),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();
    services
        .create_webhook(
            &tenant.id,
            WebhookIn {
                url: Some(url.clone()),
                event_types: Some(vec!["customer.created".into()]),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();

    // Throughput: queue the backlog (one customer each, so ordering does not
    // serialise them), then start the worker and time the drain.
    let mut tx = services.db().begin().await.unwrap();
    for n in 0..backlog {
        let payload: serde_json::Value =
            serde_json::from_str(&body.replace("baseline", &format!("backlog-{n}"))).unwrap();
        events::enqueue(
            &mut tx,
            &tenant.id,
            &actor,
            EventType::CustomerCreated,
            Some(&format!("backlog-{n}")),
            &payload,
        )
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let settings = WorkerSettings {
        policy: RetryPolicy::default(),
        allow_private_networks: rapport_server::webhooks::guard::AllowedNetworks::All,
        concurrency: CONCURRENCY,
        lease: Duration::from_secs(60),
    };
    let (stop, stopped) = watch::channel(false);
    let started = Instant::now();
    let worker = webhooks::spawn(services.clone(), settings, stopped);
    services.outbox_signal().notify_one();
    while services.unfinished_deliveries().await.unwrap() > 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rapport_rate = backlog as f64 / started.elapsed().as_secs_f64();

    // Latency: customers created through the service at the fixed rate.
    let (latency, lost) = measure_latency(&services, &tenant.id, &arrivals, rate, seconds).await;

    // The same, while another tenant's 20 endpoints fail (10 names that do not
    // resolve, 10 ports that refuse connections) with a backlog queued to them.
    let failing_tenant = services
        .create_tenant(
            NewTenant {
                name: Some("Failing".into()),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();
    let mut failing = Vec::new();
    for n in 0..20 {
        let url = if n % 2 == 0 {
            format!("http://unresolvable-{n}.invalid/hook")
        } else {
            let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            format!("http://{}/hook", closed.local_addr().unwrap())
        };
        let hook = services
            .create_webhook(
                &failing_tenant.id,
                WebhookIn {
                    url: Some(url),
                    ..Default::default()
                },
                &actor,
            )
            .await
            .unwrap();
        failing.push(hook.endpoint.id);
    }
    let queued = rapport_core::testing::queue_backlog(&services, &failing_tenant.id, &failing, failing_backlog / 20)
        .await
        .unwrap();
    let (behind, lost_behind) = measure_latency(&services, &tenant.id, &arrivals, rate, seconds).await;
    let claim_started = Instant::now();
    let limits = rapport_core::webhooks::deliveries::ClaimLimits {
        total: 128,
        per_endpoint: 32,
        per_tenant: 64,
        lease: Duration::from_secs(60),
    };
    let mut claims = Vec::new();
    for _ in 0..200 {
        let t0 = Instant::now();
        services.claim_deliveries(&limits, &Default::default()).await.unwrap();
        claims.push(t0.elapsed());
    }
    claims.sort();
    let claim_total = claim_started.elapsed();
    let _ = stop.send(true);
    let _ = worker.await;

    let (p50, p99) = (percentile(&latency, 50.0), percentile(&latency, 99.0));
    let (b50, b99) = (percentile(&baseline_latency, 50.0), percentile(&baseline_latency, 99.0));
    println!("webhook delivery benchmark (SQLite, local receiver, concurrency {CONCURRENCY})");
    println!("  backlog {backlog} events; latency at {rate} events/s for {seconds} s");
    println!(
        "  throughput: rapport {rapport_rate:.0} deliveries/s; baseline (bare HTTP) {baseline_rate:.0} requests/s; ratio {:.2}",
        rapport_rate / baseline_rate
    );
    println!(
        "  enqueue-to-first-attempt: p50 {:.1} ms, p99 {:.1} ms; baseline round trip p50 {:.2} ms, p99 {:.2} ms; p99 ratio {:.1}",
        ms(p50),
        ms(p99),
        ms(b50),
        ms(b99),
        ms(p99) / ms(b99).max(0.001)
    );
    println!("  targets: >= 1000 deliveries/s, p99 < 250 ms; missing deliveries: {lost}");
    let (f50, f99) = (percentile(&behind, 50.0), percentile(&behind, 99.0));
    println!(
        "  behind another tenant's {queued} failing deliveries (20 endpoints): p50 {:.1} ms, p99 {:.1} ms; \
         p99 ratio to the run without {:.2} (target <= 2); missing deliveries: {lost_behind}",
        ms(f50),
        ms(f99),
        ms(f99) / ms(p99).max(0.001)
    );
    println!(
        "  an idle claim behind that backlog: p50 {:.3} ms, p99 {:.3} ms ({} claims in {:.0} ms)",
        ms(percentile(&claims, 50.0)),
        ms(percentile(&claims, 99.0)),
        claims.len(),
        ms(claim_total)
    );
}

/// Creates customers through the service at `rate` for `seconds` and returns each
/// one's enqueue-to-arrival time (sorted), and how many never arrived.
async fn measure_latency(
    services: &Services,
    tenant_id: &TenantId,
    arrivals: &Arrivals,
    rate: u64,
    seconds: u64,
) -> (Vec<Duration>, usize) {
    let actor = Actor::system("bench");
    let mut enqueued: Vec<(String, Instant)> = Vec::new();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate));
    for _ in 0..(rate * seconds) {
        tick.tick().await;
        let t0 = Instant::now();
        let customer = services
            .save_customer(tenant_id, CustomerIn::default(), &actor)
            .await
            .unwrap();
        enqueued.push((customer.id.into_string(), t0));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let arrived = arrivals.at.lock().unwrap();
    let mut latency: Vec<Duration> = enqueued
        .iter()
        .map(|(id, t0)| arrived.get(id).map(|a| a.duration_since(*t0)).unwrap_or(Duration::MAX))
        .collect();
    latency.sort();
    let lost = latency.iter().filter(|d| **d == Duration::MAX).count();
    (latency, lost)
}
