//! The soak of issue 37 (run: `cargo xtask bench soak`, or `cargo bench -p
//! rapport-server --bench soak`): two release `rapport serve` processes on one
//! fresh PostgreSQL database, under a mixed load for `BENCH_SOAK_SECONDS`
//! (default 600), each request going to one instance or the other in turn:
//! - chats: a visitor starts, writes five messages through the widget, and an
//!   agent answers each through the REST API;
//! - tracking: batches of 20 visit events from the visitor script;
//! - recording: batches of 50 small recorded events, a new session every 100;
//! - reports: the message report of today;
//! - webhooks: an endpoint subscribed to every event, answering 200.
//!
//! Rate limits are off: the load comes from one address.
//!
//! It reports each operation's p50 and p99 with, as the baseline measured in
//! the same run, the p99 of `GET /health` sent beside the load; errors (any
//! answer but the expected one; goal 0); whether every event was delivered
//! once; and each instance's resident memory every 10 s (goal: the second
//! half grows it by at most 10 %). `RAPPORT_TEST_POSTGRES_URL` names the
//! server (default `postgres://postgres@127.0.0.1:5432/test`).

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use axum::{routing::any, Router};
use rapport_core::{audit::Actor, db::Db, tenants::NewTenant, with_db, Services};
use serde_json::{json, Value};

#[path = "support/stats.rs"]
mod stats;
use stats::{ms, percentile};
#[path = "support/server.rs"]
mod server;
use server::Server;
#[path = "writes/databases.rs"]
#[allow(dead_code)]
mod databases;
use databases::{Backend, FreshDb};

/// Latencies and errors per operation, shared by the load's tasks.
#[derive(Default)]
struct Tally {
    ops: Mutex<BTreeMap<&'static str, (Vec<Duration>, u64)>>,
}

impl Tally {
    fn note(&self, op: &'static str, took: Duration, ok: bool) {
        let mut ops = self.ops.lock().unwrap();
        let entry = ops.entry(op).or_default();
        if ok {
            entry.0.push(took);
        } else {
            entry.1 += 1;
        }
    }
}

/// One request, timed and tallied: `Some(body)` when the status was `expected`.
async fn call(tally: &Tally, op: &'static str, request: reqwest::RequestBuilder, expected: u16) -> Option<Value> {
    let started = Instant::now();
    let answer = request.timeout(Duration::from_secs(30)).send().await;
    let (ok, body) = match answer {
        Ok(response) if response.status().as_u16() == expected => {
            let body = response.json::<Value>().await.unwrap_or(Value::Null);
            (true, Some(body))
        }
        Ok(response) => {
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            eprintln!("{op}: {status} {}", text.chars().take(200).collect::<String>());
            (false, None)
        }
        Err(err) => {
            eprintln!("{op}: {err}");
            (false, None)
        }
    };
    tally.note(op, started.elapsed(), ok);
    body
}

/// The two instances, taken in turn.
struct Instances {
    bases: [String; 2],
    next: std::sync::atomic::AtomicUsize,
}

impl Instances {
    fn pick(&self) -> &str {
        &self.bases[self.next.fetch_add(1, Ordering::Relaxed) % 2]
    }
}

struct Load {
    instances: Instances,
    token: String,
    widget_key: String,
    tally: Tally,
    stop: AtomicBool,
    client: reqwest::Client,
}

impl Load {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    async fn chats(&self) {
        while self.running() {
            let visitor = call(
                &self.tally,
                "chat: visitor starts",
                self.client
                    .post(format!("{}/rest/v1/widget/visitor", self.instances.pick()))
                    .header("rapport-widget-key", &self.widget_key)
                    .json(&json!({"firstName": "Soak"})),
                201,
            )
            .await;
            let Some(visitor) = visitor else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let (customer, token) = (
                visitor["customerId"].as_str().unwrap_or_default().to_string(),
                visitor["visitorToken"].as_str().unwrap_or_default().to_string(),
            );
            for n in 0..5 {
                call(
                    &self.tally,
                    "chat: visitor message",
                    self.client
                        .post(format!("{}/rest/v1/widget/message", self.instances.pick()))
                        .header("rapport-widget-key", &self.widget_key)
                        .bearer_auth(&token)
                        .json(&json!({"message": format!("question {n}")})),
                    201,
                )
                .await;
                call(
                    &self.tally,
                    "chat: agent answer",
                    self.client
                        .post(format!("{}/rest/v1/message", self.instances.pick()))
                        .bearer_auth(&self.token)
                        .json(&json!({"customerId": customer, "isExternalId": false, "type": "MESSAGE", "message": format!("answer {n}")})),
                    201,
                )
                .await;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }

    async fn tracking(&self) {
        let mut n = 0u64;
        while self.running() {
            let now = chrono::Utc::now().timestamp_millis();
            let events: Vec<Value> = (0..20)
                .map(|i| {
                    json!({"type": "VISIT", "id": uuid::Uuid::new_v4().to_string(), "visitorId": format!("soak-{}", (n * 20 + i) % 5000),
                    "url": "https://shop.example/", "startedAt": now, "durationMs": 1000, "pageViews": 1})
                })
                .collect();
            n += 1;
            call(
                &self.tally,
                "tracking batch",
                self.client
                    .post(format!("{}/rest/v1/widget/track", self.instances.pick()))
                    .header("rapport-widget-key", &self.widget_key)
                    .json(&json!({ "events": events })),
                202,
            )
            .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    async fn recording(&self) {
        while self.running() {
            let started = call(
                &self.tally,
                "recording: session starts",
                self.client
                    .post(format!("{}/rest/v1/widget/recording", self.instances.pick()))
                    .header("rapport-widget-key", &self.widget_key)
                    .json(&json!({"visitorId": "soak", "url": "https://shop.example/"})),
                201,
            )
            .await;
            let Some(started) = started else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let (id, token) = (
                started["sessionId"].as_str().unwrap_or_default().to_string(),
                started["writeToken"].as_str().unwrap_or_default().to_string(),
            );
            for seq in 0..100 {
                if !self.running() {
                    break;
                }
                let now = chrono::Utc::now().timestamp_millis();
                let events: Vec<Value> = (0..50)
                    .map(|i| json!({"type": 3, "timestamp": now, "data": {"source": 1, "positions": [{"x": 100 + i, "y": 200 + i, "id": 40, "timeOffset": 0}]}}))
                    .collect();
                call(
                    &self.tally,
                    "recording batch",
                    self.client
                        .post(format!(
                            "{}/rest/v1/widget/recording/{id}/events",
                            self.instances.pick()
                        ))
                        .header("rapport-widget-key", &self.widget_key)
                        .bearer_auth(&token)
                        .json(&json!({"seq": seq, "events": events})),
                    200,
                )
                .await;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }

    async fn reports(&self) {
        while self.running() {
            call(
                &self.tally,
                "message report",
                self.client
                    .post(format!("{}/rest/v1/report/message", self.instances.pick()))
                    .bearer_auth(&self.token)
                    .json(&json!({"metrics": [{"metricName": "MESSAGES"}], "dateFilter": {"grouping": "TODAY"}})),
                200,
            )
            .await;
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    async fn health(&self) {
        while self.running() {
            call(
                &self.tally,
                "baseline: /health",
                self.client.get(format!("{}/health", self.instances.pick())),
                200,
            )
            .await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// A receiver answering 200 to everything; counts deliveries per `webhook-id`.
async fn receiver() -> (String, Arc<Mutex<HashMap<String, u32>>>) {
    let seen: Arc<Mutex<HashMap<String, u32>>> = Arc::default();
    let noted = seen.clone();
    let app = Router::new().fallback(any(move |headers: axum::http::HeaderMap| {
        let noted = noted.clone();
        async move {
            if let Some(id) = headers.get("webhook-id").and_then(|v| v.to_str().ok()) {
                *noted.lock().unwrap().entry(id.to_string()).or_default() += 1;
            }
            "ok"
        }
    }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (base, seen)
}

#[tokio::main]
async fn main() {
    let soak = Duration::from_secs_f64(
        std::env::var("BENCH_SOAK_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(600.0),
    );
    let dir = tempfile::TempDir::with_prefix("rapport-bench-soak-").unwrap();
    let fresh = match FreshDb::create(Backend::Postgres, dir.path(), "soak").await {
        Ok(fresh) => fresh,
        Err(err) => {
            println!("PostgreSQL does not answer ({err}); the soak needs it");
            return;
        }
    };
    let (tenant_id, token) = databases::prepare_tenant(&fresh.url).await;
    let dirs = [dir.path().join("one"), dir.path().join("two")];
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap();
    }
    // The load comes from one address: the limits per address are off (and
    // the per-token ones, as `Server::start` sets).
    let unlimited = [("RAPPORT_TRACK_EVENTS_PER_MINUTE", "0")];
    let servers = [
        Server::start_with(&fresh.url, &dirs[0], &unlimited).await,
        Server::start_with(&fresh.url, &dirs[1], &unlimited).await,
    ];
    println!(
        "two instances on one PostgreSQL database: {} and {}",
        servers[0].base, servers[1].base
    );
    let client = reqwest::Client::new();
    let (hooks, seen) = receiver().await;
    let subscribed = client
        .post(format!("{}/rest/v1/webhook", servers[0].base))
        .bearer_auth(&token)
        .json(&json!({"url": format!("{hooks}/all"), "description": "soak"}))
        .send()
        .await
        .unwrap();
    assert!(subscribed.status().is_success(), "{}", subscribed.status());
    let widget_key: Value = client
        .get(format!("{}/rest/v1/widget/key", servers[1].base))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let load = Arc::new(Load {
        instances: Instances {
            bases: [servers[0].base.clone(), servers[1].base.clone()],
            next: Default::default(),
        },
        token,
        widget_key: widget_key["widgetKey"].as_str().unwrap().to_string(),
        tally: Tally::default(),
        stop: AtomicBool::new(false),
        client,
    });

    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let l = load.clone();
        tasks.push(tokio::spawn(async move { l.chats().await }));
    }
    let l = load.clone();
    tasks.push(tokio::spawn(async move { l.tracking().await }));
    let l = load.clone();
    tasks.push(tokio::spawn(async move { l.recording().await }));
    let l = load.clone();
    tasks.push(tokio::spawn(async move { l.reports().await }));
    let l = load.clone();
    tasks.push(tokio::spawn(async move { l.health().await }));
    let mut samples: Vec<(f64, [u64; 2])> = vec![(0.0, [servers[0].rss_kib(), servers[1].rss_kib()])];
    while started.elapsed() < soak {
        let next = Duration::from_secs(10).min(soak.saturating_sub(started.elapsed()));
        tokio::time::sleep(next).await;
        samples.push((
            started.elapsed().as_secs_f64(),
            [servers[0].rss_kib(), servers[1].rss_kib()],
        ));
    }
    load.stop.store(true, Ordering::Relaxed);
    for task in tasks {
        task.await.unwrap();
    }
    let elapsed = started.elapsed();

    // Every event delivered once: wait for the queue to drain.
    let observer = Db::connect(&fresh.url).await.unwrap();
    let services = Services::new(observer.clone());
    let deadline = Instant::now() + Duration::from_secs(120);
    while services.unfinished_deliveries().await.unwrap() > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let events: i64 = with_db!(&observer, |pool| sqlx::query_scalar(
        "select count(*) from events where tenant_id = $1"
    )
    .bind(&tenant_id)
    .fetch_one(pool)
    .await)
    .unwrap();
    let (delivered, twice) = {
        let seen = seen.lock().unwrap();
        (seen.len(), seen.values().filter(|n| **n > 1).count())
    };

    let tally = load.tally.ops.lock().unwrap().clone();
    let health99 = tally
        .get("baseline: /health")
        .map(|(l, _)| {
            let mut l = l.clone();
            l.sort();
            percentile(&l, 99.0)
        })
        .unwrap_or_default();
    println!("\n== soak: {:.0} s, two instances ==", elapsed.as_secs_f64());
    println!(
        "| operation | requests | p50 | p99 | errors | p99 ÷ /health p99 ({:.2} ms) |",
        ms(health99)
    );
    println!("|---|---|---|---|---|---|");
    let mut errors = 0;
    for (op, (latencies, failed)) in tally.iter() {
        let mut l = latencies.clone();
        l.sort();
        errors += failed;
        println!(
            "| {op} | {} | {:.2} ms | {:.2} ms | {failed} | {:.1} |",
            l.len() as u64 + failed,
            ms(percentile(&l, 50.0)),
            ms(percentile(&l, 99.0)),
            ms(percentile(&l, 99.0)) / ms(health99).max(1e-6)
        );
    }
    println!("errors: {errors} (goal 0)");
    println!(
        "webhooks: {events} events stored, {delivered} delivered, {twice} more than once, {} undelivered",
        events - i64::try_from(delivered).unwrap_or(0)
    );
    for i in 0..servers.len() {
        let line: Vec<String> = samples
            .iter()
            .map(|(t, kib)| format!("{t:.0}s {:.1}", kib[i] as f64 / 1024.0))
            .collect();
        println!("instance {} RSS (MiB): {}", i + 1, line.join(", "));
        let mid_at = elapsed.as_secs_f64() / 2.0;
        let mid = samples
            .iter()
            .min_by(|a, b| (a.0 - mid_at).abs().total_cmp(&(b.0 - mid_at).abs()))
            .map(|s| s.1[i])
            .unwrap_or(1);
        let end = samples.last().map(|s| s.1[i]).unwrap_or(mid);
        let growth = end as f64 / (mid as f64).max(1.0);
        println!(
            "instance {} RSS: {:.1} MiB at the middle, {:.1} MiB at the end: {growth:.3}× (goal ≤ 1.10){}",
            i + 1,
            mid as f64 / 1024.0,
            end as f64 / 1024.0,
            if growth <= 1.10 { "" } else { "  MISSED" }
        );
    }
    drop(servers);
    observer.close().await;
    fresh.drop_now().await;
}
