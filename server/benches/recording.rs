//! Recording ingest benchmark of issue 23 (run: `cargo xtask bench recording`,
//! or `cargo bench -p rapport-server --bench recording`).
//!
//! **Ingest throughput**: the release `rapport` binary serves; four visitor
//! scripts append gzip-compressed batches of rrweb events
//! (`POST /rest/v1/widget/recording/{id}/events`, 100 events of about 14 KiB
//! of JSON each, as the recorder sends them) for `BENCH_SECONDS`, each to its
//! own session. The baseline, in the same run and on the same database kind:
//! four tasks of this process inserting the very same compressed bytes into
//! `recording_chunks` directly, one transaction each. The figure is the ratio of
//! batches (and event bytes) per second through Rapport to the direct writes;
//! what is left is HTTP, the write token check, validation, re-compression and
//! the session's bookkeeping.
//!
//! Settings: `BENCH_SECONDS` (per measurement, default 10), `BENCH_BACKENDS`
//! (`sqlite,postgres`), `RAPPORT_TEST_POSTGRES_URL`.

use std::{
    path::Path,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use rapport_core::{audit::Actor, db::Db, recordings::gzip, tenants::NewTenant, with_db, Services};
use serde_json::{json, Value};

#[path = "support/server.rs"]
mod server;
use server::Server;

const WRITERS: usize = 4;
const EVENTS_PER_BATCH: usize = 100;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A batch as the recorder sends one: mostly incremental snapshots (mouse
/// moves, inputs, DOM mutations with text), as JSON.
fn batch(seq: u64) -> Value {
    let start = 1_800_000_000_000_i64 + seq as i64 * 5_000;
    let events: Vec<Value> = (0..EVENTS_PER_BATCH)
        .map(|i| {
            let at = start + i as i64 * 50;
            match i % 4 {
                0 => json!({"type": 3, "timestamp": at, "data": {"source": 1, "positions": [{"x": 100 + i, "y": 200 + i, "id": 40, "timeOffset": 0}]}}),
                1 => json!({"type": 3, "timestamp": at, "data": {"source": 5, "id": 94, "text": "*".repeat(i % 12 + 1), "isChecked": false}}),
                2 => json!({"type": 3, "timestamp": at, "data": {"source": 0, "texts": [], "attributes": [{"id": 60 + i, "attributes": {"class": "product highlighted", "hidden": null}}], "removes": [], "adds": [{"parentId": 30, "nextId": null, "node": {"type": 2, "tagName": "p", "attributes": {"class": "note"}, "childNodes": [], "id": 1000 + seq * 100 + i as u64}}]}}),
                _ => json!({"type": 3, "timestamp": at, "data": {"source": 3, "id": 1, "x": 0, "y": (i * 37) % 2400}}),
            }
        })
        .collect();
    json!({"seq": seq, "events": events})
}

/// A tenant with a widget key: `(tenant id, widget key)`.
async fn tenant(s: &Services, name: &str) -> (String, String) {
    let tenant = s
        .create_tenant(
            NewTenant {
                name: Some(name.into()),
                ..Default::default()
            },
            &Actor::system("bench"),
        )
        .await
        .unwrap();
    let key = s.widget_key(&tenant.id).await.unwrap();
    (tenant.id.into_string(), key)
}

struct Figure {
    batches_per_second: f64,
    bytes_per_second: f64,
}

/// Most batches one script sends in a measurement; compressed beforehand, so
/// the load generator's CPU goes to sending.
const MAX_BATCHES: u64 = 4_000;

/// Four scripts appending over HTTP for `seconds` (or until each sent
/// [`MAX_BATCHES`]).
async fn through_rapport(server: &Server, key: &str, seconds: u64, json_len: usize) -> Figure {
    let bodies: Arc<Vec<Vec<u8>>> = Arc::new(
        (0..MAX_BATCHES)
            .map(|seq| gzip(&serde_json::to_vec(&batch(seq)).unwrap()).unwrap())
            .collect(),
    );
    let client = reqwest::Client::new();
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (client, base, key, done, bodies) = (
            client.clone(),
            server.base.clone(),
            key.to_string(),
            done.clone(),
            bodies.clone(),
        );
        writers.push(tokio::spawn(async move {
            let started: Value = client
                .post(format!("{base}/rest/v1/widget/recording"))
                .header("rapport-widget-key", &key)
                .json(&json!({"visitorId": format!("bench-{w}"), "url": "https://shop.example/"}))
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let (id, token) = (
                started["sessionId"].as_str().unwrap().to_string(),
                started["writeToken"].as_str().unwrap().to_string(),
            );
            for body in bodies.iter() {
                if Instant::now() >= deadline {
                    break;
                }
                let response = client
                    .post(format!("{base}/rest/v1/widget/recording/{id}/events"))
                    .header("rapport-widget-key", &key)
                    .header("content-type", "application/json")
                    .header("content-encoding", "gzip")
                    .bearer_auth(&token)
                    .body(body.clone())
                    .send()
                    .await
                    .unwrap();
                assert!(response.status().is_success(), "{}", response.status());
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    for w in writers {
        w.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let n = done.load(Ordering::Relaxed) as f64;
    Figure {
        batches_per_second: n / elapsed,
        bytes_per_second: n * json_len as f64 / elapsed,
    }
}

/// The baseline: the same compressed bytes inserted into `recording_chunks`
/// directly, four tasks, one transaction per batch.
async fn directly(db: &Db, tenant_id: &str, seconds: u64, body: &[u8], json_len: usize) -> Figure {
    // Through the writer, as Rapport writes (on SQLite the other pool only reads).
    let db = db.writer();
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let (db, tenant, done, body) = (db.clone(), tenant_id.to_string(), done.clone(), body.to_vec());
        writers.push(tokio::spawn(async move {
            let session = format!("direct-{w}-{}", uuid::Uuid::now_v7());
            with_db!(&db, |pool| sqlx::query(
                "insert into recorded_sessions (tenant_id, id, visitor_id, page_count, started_at, created_at, updated_at) \
                 values ($1, $2, 'bench', 0, 0, 0, 0)"
            )
            .bind(&tenant)
            .bind(&session)
            .execute(pool)
            .await
            .map(|_| ()))
            .unwrap();
            let mut seq = 0_i64;
            while Instant::now() < deadline {
                let mut tx = db.begin().await.unwrap();
                rapport_core::with_tx!(&mut tx, |conn| sqlx::query(
                    "insert into recording_chunks (tenant_id, session_id, seq, first_at, last_at, event_count, data) \
                     values ($1, $2, $3, 0, 0, $4, $5)"
                )
                .bind(&tenant)
                .bind(&session)
                .bind(seq)
                .bind(EVENTS_PER_BATCH as i64)
                .bind(&body)
                .execute(conn)
                .await
                .map(|_| ()))
                .unwrap();
                tx.commit().await.unwrap();
                seq += 1;
                done.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    for w in writers {
        w.await.unwrap();
    }
    let elapsed = started.elapsed().as_secs_f64();
    let n = done.load(Ordering::Relaxed) as f64;
    Figure {
        batches_per_second: n / elapsed,
        bytes_per_second: n * json_len as f64 / elapsed,
    }
}

async fn ingest(backend: &str, url: &str, data: &Path) {
    let db = Db::connect(url).await.unwrap();
    db.migrate().await.unwrap();
    let services = Services::new(db.clone());
    let (tenant_id, key) = tenant(&services, "Recorded shop").await;
    let json = serde_json::to_vec(&batch(0)).unwrap();
    let body = gzip(&json).unwrap();
    let seconds = env_u64("BENCH_SECONDS", 10);
    let server = Server::start(url, data).await;
    let http = through_rapport(&server, &key, seconds, json.len()).await;
    drop(server);
    let direct = directly(&db, &tenant_id, seconds, &body, json.len()).await;
    println!(
        "Recording ingest ({backend}, {WRITERS} writers, batches of {EVENTS_PER_BATCH} events: {} B JSON, {} B gzip)",
        json.len(),
        body.len()
    );
    println!(
        "  baseline: the same bytes inserted directly   {:8.0} batches/s  {:6.1} MiB/s of events",
        direct.batches_per_second,
        direct.bytes_per_second / 1048576.0
    );
    println!(
        "  through Rapport (HTTP, gzip, checked)        {:8.0} batches/s  {:6.1} MiB/s of events",
        http.batches_per_second,
        http.bytes_per_second / 1048576.0
    );
    println!("  ratio: {:.2}", http.batches_per_second / direct.batches_per_second);
    db.close().await;
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    if backends.contains("sqlite") {
        let url = format!("sqlite://{}/recording.db", dir.path().display());
        let data = dir.path().join("sqlite-data");
        std::fs::create_dir_all(&data).unwrap();
        ingest("SQLite", &url, &data).await;
    }
    if backends.contains("postgres") {
        let admin = std::env::var("RAPPORT_TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        match Db::connect(&admin).await {
            Ok(admin_db) => {
                let name = format!("rapport_bench_recording_{}", chrono::Utc::now().timestamp());
                with_db!(&admin_db, |pool| sqlx::query(&format!("create database {name}"))
                    .execute(pool)
                    .await
                    .map(|_| ()))
                .unwrap();
                let url = rapport_core::testing::replace_database(&admin, &name);
                let data = dir.path().join("postgres-data");
                std::fs::create_dir_all(&data).unwrap();
                ingest("PostgreSQL", &url, &data).await;
                let drop = format!("drop database if exists {name} with (force)");
                let _ = with_db!(&admin_db, |pool| sqlx::query(&drop).execute(pool).await.map(|_| ()));
            }
            Err(e) => println!("PostgreSQL skipped: {e}"),
        }
    }
}
