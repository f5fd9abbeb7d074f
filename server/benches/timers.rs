//! Timer lateness benchmark (run: `cargo xtask bench timers`, or
//! `cargo bench -p rapport-server --bench timers`).
//!
//! The real job runner (`rapport_server::workers`, default settings: a look every
//! 200 ms, 16 jobs at once) runs in this process on a fresh database, and a
//! stream of probe timers (`JobKind::Probe`, whose handler only reports when it
//! ran) is scheduled through the service layer at a fixed rate, each due a short
//! delay after it is written, as the engines schedule `NO_ANSWER` and SLA timers.
//! Lateness is the time from a timer's due time to its handler's start.
//!
//! In one run, per backend:
//! - **baseline**: the stream with an otherwise empty `jobs` table;
//! - **pending**: the same stream with 100,000 timers pending in the table (due
//!   in the next hours, of the engines' kinds), as a busy installation holds.
//!
//! It prints p50, p99 and the maximum of each, and the pending p99 as a ratio to
//! the baseline's. Target (issue 22): pending p99 at most 1 s. Sizes:
//! `BENCH_TIMERS` (pending timers, 100,000), `BENCH_RATE` (timers/s, 50),
//! `BENCH_SECONDS` (10), `BENCH_DELAY_MS` (300), `BENCH_BACKENDS`
//! (`sqlite,postgres`; PostgreSQL needs `RAPPORT_TEST_POSTGRES_URL` and is
//! skipped with a note without it).

use std::time::{Duration, Instant};

use rapport_core::{jobs::JobKind, testing::TestDb, time::now_ms, with_db, with_tx, Services};
use rapport_server::workers::{self, Fired, Handlers, RunnerSettings};
use serde_json::json;
use tokio::sync::{mpsc, watch};

#[path = "support/stats.rs"]
mod stats;
use stats::{ms, percentile};

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Lateness figures of one phase.
struct Lateness {
    p50: Duration,
    p99: Duration,
    max: Duration,
    fired: usize,
    scheduled: usize,
}

impl std::fmt::Display for Lateness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "p50 {:>4.0} ms  p99 {:>4.0} ms  max {:>4.0} ms  ({} of {} fired)",
            ms(self.p50),
            ms(self.p99),
            ms(self.max),
            self.fired,
            self.scheduled
        )
    }
}

/// Runs the runner while `count` probe timers are scheduled at `rate` per second,
/// each due `delay` after it is written; returns their lateness.
async fn stream(services: &Services, label: &str, count: usize, rate: u64, delay: Duration) -> Lateness {
    let (observer, mut fired) = mpsc::unbounded_channel::<Fired>();
    let handlers = Handlers {
        probe: Some(observer),
        ..Handlers::default()
    };
    let (stop, stopped) = watch::channel(false);
    let runner = workers::spawn(services.clone(), handlers, RunnerSettings::default(), stopped);
    let started = Instant::now();
    let every = Duration::from_secs_f64(1.0 / rate.max(1) as f64);
    for n in 0..count {
        // Open loop: each timer is written at its own moment, however the last went.
        tokio::time::sleep_until((started + every * n as u32).into()).await;
        let due = now_ms() + i64::try_from(delay.as_millis()).unwrap_or(0);
        services
            .schedule_job(None, JobKind::Probe, &format!("{label}:{n}"), due, &json!({}))
            .await
            .expect("scheduling a timer");
    }
    let mut late = Vec::with_capacity(count);
    let deadline = Instant::now() + delay + Duration::from_secs(30);
    while late.len() < count {
        match tokio::time::timeout_at(deadline.into(), fired.recv()).await {
            Ok(Some(f)) => late.push(Duration::from_millis(u64::try_from(f.at - f.job.due_at).unwrap_or(0))),
            _ => break,
        }
    }
    let _ = stop.send(true);
    let _ = runner.await;
    late.sort();
    Lateness {
        p50: percentile(&late, 50.0),
        p99: percentile(&late, 99.0),
        max: late.last().copied().unwrap_or_default(),
        fired: late.len(),
        scheduled: count,
    }
}

/// Writes `count` timers due over the next day (from an hour on), of the
/// engines' kinds, in multi-row inserts of a few thousand rows a transaction.
async fn pending_timers(services: &Services, count: usize) {
    const ROWS: usize = 500;
    const STATEMENTS: usize = 10;
    let kinds = [
        JobKind::NoAnswer,
        JobKind::SlaDeadline,
        JobKind::QueueTimeout,
        JobKind::WatchdogSummary,
    ];
    let now = now_ms();
    let mut written = 0;
    while written < count {
        let mut tx = services.db().begin().await.expect("a transaction");
        for _ in 0..STATEMENTS {
            let n = (count - written).min(ROWS);
            if n == 0 {
                break;
            }
            let values = (0..n)
                .map(|i| {
                    let p = i * 4;
                    format!("(${}, ${}, ${}, '{{}}', ${}, $1)", p + 2, p + 3, p + 4, p + 5)
                })
                .collect::<Vec<_>>()
                .join(", ");
            let sql = format!("insert into jobs (id, kind, job_key, payload, due_at, created_at) values {values}");
            with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql).bind(now);
                for i in written..written + n {
                    let due = now + 3_600_000 + (i as i64 * 86_400_000) / count as i64;
                    q = q
                        .bind(uuid::Uuid::now_v7().to_string())
                        .bind(kinds[i % kinds.len()].as_str())
                        .bind(format!("pending:{i}"))
                        .bind(due);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })
            .expect("writing pending timers");
            written += n;
        }
        tx.commit().await.expect("a commit");
    }
}

async fn run_backend(db: TestDb, pending: usize, rate: u64, seconds: u64, delay: Duration) {
    let services = db.services();
    let count = usize::try_from(rate * seconds).unwrap_or(usize::MAX).max(1);
    let baseline = stream(&services, "baseline", count, rate, delay).await;
    let loading = Instant::now();
    pending_timers(&services, pending).await;
    let in_table: i64 = with_db!(services.db(), |pool| sqlx::query_scalar("select count(*) from jobs")
        .fetch_one(pool)
        .await)
    .expect("counting jobs");
    println!(
        "  {pending} pending timers written in {:.1} s ({in_table} jobs in the table)",
        loading.elapsed().as_secs_f64()
    );
    let loaded = stream(&services, "loaded", count, rate, delay).await;
    println!("  baseline (empty table)      {baseline}");
    println!("  with {pending:>7} pending      {loaded}");
    let ratio = loaded.p99.as_secs_f64() / baseline.p99.as_secs_f64().max(0.001);
    let verdict = if loaded.p99 <= Duration::from_secs(1) && loaded.fired == loaded.scheduled {
        "met"
    } else {
        "MISSED"
    };
    println!("  p99 ratio pending/baseline {ratio:.2}; target p99 ≤ 1000 ms: {verdict}");
    drop_database(db).await;
}

/// Drops a PostgreSQL bench database at once (a SQLite file goes with its
/// directory).
async fn drop_database(db: TestDb) {
    if db.db.backend() != rapport_core::db::Backend::Postgres {
        return;
    }
    db.db.close().await;
    let Ok(admin_url) = std::env::var(rapport_core::testing::POSTGRES_URL_VAR) else {
        return;
    };
    let name = db
        .url
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .split('?')
        .next()
        .unwrap_or_default();
    if let Ok(admin) = rapport_core::db::Db::connect(&admin_url).await {
        let sql = format!("drop database if exists {name} with (force)");
        let _ = with_db!(&admin, |pool| sqlx::query(&sql).execute(pool).await.map(|_| ()));
        admin.close().await;
    }
}

#[tokio::main]
async fn main() {
    let pending = env_or("BENCH_TIMERS", 100_000) as usize;
    let rate = env_or("BENCH_RATE", 50);
    let seconds = env_or("BENCH_SECONDS", 10);
    let delay = Duration::from_millis(env_or("BENCH_DELAY_MS", 300));
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    println!(
        "timer lateness: {rate} timers/s for {seconds} s, each due {} ms after it is written; the runner polls every {} ms",
        delay.as_millis(),
        RunnerSettings::default().poll.as_millis()
    );
    for backend in backends.split(',').map(str::trim).filter(|b| !b.is_empty()) {
        println!("{backend}:");
        let db = match backend {
            "sqlite" => TestDb::sqlite().await.expect("a SQLite database"),
            "postgres" => match TestDb::postgres().await {
                Ok(Some(db)) => db,
                Ok(None) => {
                    println!("  skipped: {} is not set", rapport_core::testing::POSTGRES_URL_VAR);
                    continue;
                }
                Err(e) => {
                    println!("  skipped: {e}");
                    continue;
                }
            },
            other => panic!("BENCH_BACKENDS: unknown backend {other:?} (sqlite, postgres)"),
        };
        run_backend(db, pending, rate, seconds, delay).await;
    }
}
