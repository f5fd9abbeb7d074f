//! Write-path benchmark of issue 21 (run: `cargo xtask bench writes`, or
//! `cargo bench -p rapport-server --bench writes`).
//!
//! The real release `rapport` binary runs as its own process (`rapport serve` on a
//! free loopback port, rate limits off) on a fresh database of each backend, and a
//! load generator in this process talks HTTP/1.1 to it over keep-alive connections,
//! one tokio task per connection. Every figure is reported with a baseline measured
//! in the same run, since the machines are shared and noisy:
//!
//! 1. create-customer throughput (`POST /rest/v1/customer`, closed loop on 1, 4 and
//!    16 connections, the best of the three), against a raw sqlx transaction on one
//!    connection that writes the same rows into a fresh database of the same kind;
//! 2. p50 and p99 latency of creates at half that rate, open loop on 4 connections
//!    (requests are scheduled at fixed times and latency counts from the scheduled
//!    time, so time spent queueing counts), against the raw transaction's commit
//!    latency;
//! 3. fan-out after commit: the create p99 of a tenant with 20 webhook endpoints (1
//!    answering in 50 ms, 9 that do not resolve, 10 answering 500) against that of a
//!    tenant with the answering one alone, at the rate of figure 2, measured in turn
//!    for five rounds (which goes first alternates; the p99 of all five rounds'
//!    creates against theirs, each round and the median round, for
//!    information), then side by side for five rounds (both tenants create at
//!    once, each at half that rate on 2 connections): the p99 of all five
//!    rounds' creates against theirs (target: within 1.2×); and enqueue → first attempt p99 at
//!    the answering endpoint while those creates flow, against the same delay for
//!    creates made one at a time (target: 100 ms);
//! 4. the same p99 while a neighbour tenant's 20 webhook endpoints fail (10 hosts
//!    that do not resolve, 10 answering 500), 5,000 events behind each (100,000
//!    deliveries owed), against the p99 of figure 2, measured just before; and, for
//!    information, the neighbour's create rate while its 20 endpoints fall behind;
//! 5. `GET /rest/v1/customer?pageSize=20` throughput against `GET /health`;
//! 6. the list read while two connections create customers, against the list alone;
//! 7. resident memory of the server through a mixed soak (2 connections creating,
//!    2 listing), sampled every 10 s.
//!
//! The load generator shares the machine's cores with the server, as `wrk` did in the
//! issue's measurements, so every HTTP figure includes its cost. Open-loop schedules
//! use tokio's timer, which is late by up to a millisecond; that lateness counts as
//! latency.
//!
//! Settings: `BENCH_SECONDS` per phase (default 10), `BENCH_SOAK_SECONDS` (default
//! 600), `BENCH_BACKENDS` (`sqlite,postgres`), `RAPPORT_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`; PostgreSQL is skipped with a note when
//! it does not answer). Targets (from the issue) are checked on SQLite only.

// The modules beside this file (databases, load, endpoints, fan_out) take
// these through `use super::*`.
use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use axum::{http::StatusCode, routing::any, Router};
use rapport_core::{audit::Actor, db::Db, tenants::NewTenant, with_db, Services};

/// How long each measured phase runs.
fn phase_seconds() -> Duration {
    Duration::from_secs_f64(env_f64("BENCH_SECONDS", 10.0))
}

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

#[path = "../support/stats.rs"]
mod stats;
use stats::{ms, percentile};
#[path = "../support/server.rs"]
mod server;
use server::rapport_binary;
mod databases;
use databases::*;
mod load;
use load::*;
mod endpoints;
use endpoints::*;
mod backend;
mod baseline;
mod fan_out;
use backend::run_backend;

/// One line of the summary table.
struct Row {
    backend: Backend,
    figure: &'static str,
    value: String,
    baseline: String,
    ratio: String,
    /// The target, and whether it was met (SQLite only).
    target: Option<(&'static str, bool)>,
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let backends = std::env::var("BENCH_BACKENDS").unwrap_or_else(|_| "sqlite,postgres".into());
    println!(
        "write-path benchmark: rapport {} ; BENCH_SECONDS {} ; BENCH_SOAK_SECONDS {} ; {} cores shared by server and load",
        rapport_binary().display(),
        phase_seconds().as_secs_f64(),
        env_f64("BENCH_SOAK_SECONDS", 600.0),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for name in backends.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let backend = match name {
            "sqlite" => Backend::Sqlite,
            "postgres" => Backend::Postgres,
            other => panic!("BENCH_BACKENDS: unknown backend {other:?} (sqlite, postgres)"),
        };
        if let Err(e) = run_backend(backend, &mut rows).await {
            let note = format!("{} skipped: {e}", backend.name());
            println!("{note}");
            notes.push(note);
        }
    }

    println!("\nsummary (targets are the issue's, checked on SQLite)");
    let header = ("backend", "figure", "value", "baseline", "ratio", "target", "");
    let line = |b: &str, f: &str, v: &str, base: &str, r: &str, t: &str, p: &str| {
        println!("| {b:<10} | {f:<43} | {v:<24} | {base:<26} | {r:>6} | {t:<9} | {p:<4} |")
    };
    line(header.0, header.1, header.2, header.3, header.4, header.5, "");
    println!(
        "|{}|{}|{}|{}|{}|{}|{}|",
        "-".repeat(12),
        "-".repeat(45),
        "-".repeat(26),
        "-".repeat(28),
        "-".repeat(8),
        "-".repeat(11),
        "-".repeat(6)
    );
    for r in &rows {
        let (target, verdict) = match (r.backend, r.target) {
            (Backend::Sqlite, Some((t, met))) => (t, if met { "PASS" } else { "MISS" }),
            (Backend::Postgres, Some((t, _))) => (t, "info"),
            (_, None) => ("-", ""),
        };
        line(
            r.backend.name(),
            r.figure,
            &r.value,
            &r.baseline,
            &r.ratio,
            target,
            verdict,
        );
    }
    for note in notes {
        println!("note: {note}");
    }
}
