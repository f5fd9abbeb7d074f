//! Report benchmark (run: `cargo xtask bench`, or
//! `cargo bench -p rapport-core --bench reports`).
//!
//! Loads a realistic history of about 10 million facts (90 days, 50 agents) into
//! SQLite with the demo generator, then measures, per report and per period
//! (`LAST_7_DAYS`, `LAST_MONTH`, `LAST_YEAR`), latency p50 and p99 of:
//! - **Rapport**: the report as the REST operation answers it (rollups where they
//!   apply);
//! - **baseline**: the same report computed with the naive `GROUP BY` over the raw
//!   facts ([`Strategy::Raw`]), in the same run. Its reads are batched and packed
//!   into one statement as Rapport's are (`rapport_core::reports::reads`), and it
//!   plans with the same cached zone state, so the ratio measures what rollups
//!   save, not round trips.
//!
//! Figures are reported as ratios to the baseline, since the machines are shared and
//! noisy. The header also gives the floor every report stands on: one trivial
//! statement through the same pool. `BENCH_ONLY=chat,resources` measures only the reports whose names
//! contain one of those words. The loaded database is kept (under the target directory, or at
//! `BENCH_REPORTS_DB`) and reused by later runs with the same sizes; delete it to
//! reload. Sizes: `BENCH_FACTS` (default 10 000 000), `BENCH_DAYS` (90),
//! `BENCH_AGENTS` (50); samples per case: `BENCH_SAMPLES` (30) and
//! `BENCH_BASELINE_SAMPLES` (5).

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use rapport_core::{
    audit::Actor,
    db::Db,
    ids::TenantId,
    reports::{
        api::{DateFilter, Grouping, MetricEntry, ReportRequest, ResourceFilter, ResourceGroupBy, ScriptErrorFilter},
        catalogue::{Report, METRICS},
        demo::DemoOptions,
        query::Strategy,
        times::TimesKind,
    },
    tenants::NewTenant,
    Services,
};

/// Targets from the issue: p50 under 50 ms, and at least 10× the baseline.
const TARGET_P50: Duration = Duration::from_millis(50);
const TARGET_SPEEDUP: f64 = 10.0;
/// The layout of a loaded history: 2 since daily rollups (migration 0010), 3
/// since demo script errors keep their line.
const LAYOUT: u32 = 3;
/// The zone the tenant's buckets are cut in.
const ZONE: &str = "Europe/Berlin";

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() as f64 - 1.0)).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Sizes of the loaded history.
#[derive(Debug, Clone, Copy)]
struct Sizes {
    facts: u64,
    days: u32,
    agents: u32,
}

/// What a loaded database holds, written next to it once loading has finished.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Loaded {
    tenant_id: TenantId,
    facts: u64,
    loaded_at_ms: i64,
    load_seconds: f64,
}

fn database_path(sizes: Sizes) -> PathBuf {
    if let Ok(path) = std::env::var("BENCH_REPORTS_DB") {
        return PathBuf::from(path);
    }
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    // The layout number changes when recording writes new rollups, so that a
    // history loaded by an older build (whose new rollups would be empty) is not
    // reused.
    target.join("bench-data").join(format!(
        "reports-v{LAYOUT}-{}f-{}d-{}a.sqlite",
        sizes.facts, sizes.days, sizes.agents
    ))
}

async fn open(path: &Path) -> Services {
    let db = Db::connect(&format!("sqlite://{}", path.display())).await.unwrap();
    db.migrate().await.unwrap();
    Services::new(db)
}

async fn new_tenant(services: &Services) -> TenantId {
    services
        .create_tenant(
            NewTenant {
                name: Some("Bench".into()),
                timezone: Some(ZONE.into()),
                ..Default::default()
            },
            &Actor::system("bench"),
        )
        .await
        .unwrap()
        .id
}

/// Facts the generator writes for `days × agents` at `scale`, measured on a small
/// throwaway database (presence does not grow with the scale, traffic does).
async fn facts_at(scale: f64) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let services = open(&dir.path().join("calibrate.sqlite")).await;
    let tenant = new_tenant(&services).await;
    let options = DemoOptions {
        days: 14,
        agents: 5,
        scale,
        seed: 7,
    };
    let summary = services.generate_demo_data(&tenant, &options).await.unwrap();
    summary.facts as f64 / 70.0
}

/// Opens the loaded history, loading it first when missing.
async fn load(sizes: Sizes) -> (Services, Loaded) {
    let path = database_path(sizes);
    let meta_path = path.with_extension("json");
    if let Ok(meta) = std::fs::read_to_string(&meta_path) {
        if let Ok(loaded) = serde_json::from_str::<Loaded>(&meta) {
            if path.exists() {
                eprintln!("bench: reusing {} ({} facts)", path.display(), loaded.facts);
                return (open(&path).await, loaded);
            }
        }
    }
    for stale in [&path, &meta_path] {
        let _ = std::fs::remove_file(stale);
    }
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();

    // Facts per agent-day are linear in the scale: measure two points, solve.
    let (low, high) = (facts_at(1.0).await, facts_at(4.0).await);
    let per_scale = (high - low) / 3.0;
    let wanted = sizes.facts as f64 / f64::from(sizes.days * sizes.agents);
    let scale = (1.0 + (wanted - low) / per_scale).max(0.1);
    eprintln!(
        "bench: loading ~{} facts ({} days, {} agents, scale {scale:.2}) into {}",
        sizes.facts,
        sizes.days,
        sizes.agents,
        path.display()
    );
    let services = open(&path).await;
    let tenant_id = new_tenant(&services).await;
    let started = Instant::now();
    let summary = services
        .generate_demo_data(
            &tenant_id,
            &DemoOptions {
                days: sizes.days,
                agents: sizes.agents,
                scale,
                seed: 42,
            },
        )
        .await
        .unwrap();
    let loaded = Loaded {
        tenant_id,
        facts: summary.facts,
        loaded_at_ms: chrono::Utc::now().timestamp_millis(),
        load_seconds: started.elapsed().as_secs_f64(),
    };
    eprintln!(
        "bench: loaded {} facts in {:.0} s ({:.0} facts/s)",
        loaded.facts,
        loaded.load_seconds,
        loaded.facts as f64 / loaded.load_seconds
    );
    // Fresh statistics for the planner, as a long-running database would have.
    if let Db::Sqlite(pools) = services.db() {
        sqlx::query("analyze").execute(&pools.writes).await.unwrap();
    }
    std::fs::write(&meta_path, serde_json::to_string_pretty(&loaded).unwrap()).unwrap();
    (services, loaded)
}

/// One report operation to measure.
#[derive(Debug, Clone)]
enum Case {
    /// An aggregation report with every metric of its family.
    Family(Report),
    /// An aggregation report with one metric split by agent.
    ByAgent(Report, &'static str),
    /// `GET /report/agent/conversations`.
    ConversationSplit,
    /// `POST /report/agent/times/…`.
    Times(TimesKind),
    /// `POST /report/resources`, optionally grouped.
    Resources(Option<ResourceGroupBy>),
    /// `POST /report/scripterrors`.
    ScriptErrors,
}

impl Case {
    fn name(&self) -> String {
        match self {
            Case::Family(report) => report.path().to_string(),
            Case::ByAgent(report, metric) => format!("{} {metric} by agent", report.path()),
            Case::ConversationSplit => "agent/conversations".into(),
            Case::Times(TimesKind::Online) => "agent/times/online".into(),
            Case::Times(TimesKind::LoggedIn) => "agent/times/loggedin".into(),
            Case::Resources(None) => "resources".into(),
            Case::Resources(Some(_)) => "resources by type".into(),
            Case::ScriptErrors => "scripterrors".into(),
        }
    }

    /// Runs the case once and returns how many values it produced (so the work
    /// cannot be optimised away, and empty answers show up).
    async fn run(&self, services: &Services, tenant: &TenantId, grouping: Grouping, strategy: Strategy) -> usize {
        let date_filter = DateFilter {
            grouping,
            ..Default::default()
        };
        match self {
            Case::Family(report) | Case::ByAgent(report, _) => {
                let metrics = match self {
                    Case::ByAgent(_, metric) => vec![MetricEntry {
                        metric_name: metric.to_string(),
                        group_by: Some("AGENT".into()),
                        ..Default::default()
                    }],
                    _ => METRICS
                        .iter()
                        .filter(|m| m.report == *report)
                        .map(|m| MetricEntry {
                            metric_name: m.name.to_string(),
                            ..Default::default()
                        })
                        .collect(),
                };
                let request = ReportRequest { metrics, date_filter };
                let answer = services
                    .aggregate_report(tenant, *report, &request, strategy)
                    .await
                    .unwrap();
                answer.results.values().map(|b| b.len()).sum()
            }
            Case::ConversationSplit => {
                let answer = services
                    .agent_conversation_split(tenant, &date_filter, strategy)
                    .await
                    .unwrap();
                answer.results.values().flat_map(|b| b.values()).map(|m| m.len()).sum()
            }
            Case::Times(kind) => {
                let times = services.agent_times(tenant, *kind, &date_filter).await.unwrap();
                times.iter().map(|t| t.time_ranges.len()).sum()
            }
            Case::Resources(group_by) => {
                let filter = ResourceFilter {
                    date_filter,
                    group_by: *group_by,
                    ..Default::default()
                };
                let report = services.resource_report(tenant, &filter, strategy).await.unwrap();
                report.rows.len() + report.results.len()
            }
            Case::ScriptErrors => {
                let filter = ScriptErrorFilter {
                    date_filter,
                    ..Default::default()
                };
                let report = services.script_error_report(tenant, &filter, strategy).await.unwrap();
                report.errors.len() + report.results.len()
            }
        }
    }

    /// Whether the case has a separate fast path to compare with the baseline.
    /// Time lists and the script-error list are searches over raw rows on both
    /// paths (the script errors' per-day counts do have day rows), so they are
    /// judged on latency only.
    fn has_rollups(&self) -> bool {
        matches!(
            self,
            Case::Family(_) | Case::ByAgent(..) | Case::ConversationSplit | Case::Resources(_)
        )
    }
}

fn cases() -> Vec<Case> {
    let mut cases: Vec<Case> = Report::ALL.into_iter().map(Case::Family).collect();
    cases.extend([
        Case::ByAgent(Report::Agent, "ONLINE_TIME"),
        Case::ByAgent(Report::Chat, "CONVERSATIONS"),
        Case::ConversationSplit,
        Case::Times(TimesKind::Online),
        Case::Times(TimesKind::LoggedIn),
        Case::Resources(None),
        Case::Resources(Some(ResourceGroupBy::Type)),
        Case::ScriptErrors,
    ]);
    cases
}

/// Latencies of `samples` runs after one warm-up run, sorted.
async fn measure(
    services: &Services,
    tenant: &TenantId,
    case: &Case,
    grouping: Grouping,
    strategy: Strategy,
    samples: u64,
) -> (Vec<Duration>, usize) {
    let values = case.run(services, tenant, grouping, strategy).await;
    let mut times = Vec::with_capacity(samples as usize);
    for _ in 0..samples {
        let started = Instant::now();
        std::hint::black_box(case.run(services, tenant, grouping, strategy).await);
        times.push(started.elapsed());
    }
    times.sort();
    (times, values)
}

/// The p50 of `select 1` through the services' pool, over 1,000 runs.
async fn round_trip(services: &Services) -> Duration {
    let Db::Sqlite(rapport_core::db::SqlitePools { reads: pool, .. }) = services.db() else {
        return Duration::ZERO;
    };
    let mut times = Vec::with_capacity(1000);
    for _ in 0..1000 {
        let started = Instant::now();
        let one: i64 = sqlx::query_scalar("select 1").fetch_one(pool).await.unwrap();
        std::hint::black_box(one);
        times.push(started.elapsed());
    }
    times.sort();
    percentile(&times, 50.0)
}

#[tokio::main]
async fn main() {
    let sizes = Sizes {
        facts: env_or("BENCH_FACTS", 10_000_000),
        days: env_or("BENCH_DAYS", 90) as u32,
        agents: env_or("BENCH_AGENTS", 50) as u32,
    };
    let samples = env_or("BENCH_SAMPLES", 30).max(1);
    let baseline_samples = env_or("BENCH_BASELINE_SAMPLES", 5).max(1);
    let (services, loaded) = load(sizes).await;
    let age_days = (chrono::Utc::now().timestamp_millis() - loaded.loaded_at_ms) as f64 / 86_400_000.0;
    println!(
        "Reports over {} facts ({} days, {} agents, zone {ZONE}, loaded {age_days:.1} days ago in {:.0} s); \
         {samples} samples per case, {baseline_samples} for the baseline.\n",
        loaded.facts, sizes.days, sizes.agents, loaded.load_seconds
    );
    let floor = round_trip(&services).await;
    println!(
        "One trivial statement through the pool (the floor under any report): p50 {:.3} ms.\n",
        ms(floor)
    );
    println!("| report | period | values | p50 ms | p99 ms | baseline p50 ms | baseline p99 ms | speed-up (p50) |");
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    let mut worst_p50 = Duration::ZERO;
    let mut worst_speedup = f64::INFINITY;
    let mut misses = Vec::new();
    let only: Vec<String> = std::env::var("BENCH_ONLY")
        .map(|v| {
            v.split(',')
                .map(|w| w.trim().to_string())
                .filter(|w| !w.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let chosen = cases()
        .into_iter()
        .filter(|case| only.is_empty() || only.iter().any(|w| case.name().contains(w.as_str())));
    for case in chosen {
        for grouping in [Grouping::Last7Days, Grouping::LastMonth, Grouping::LastYear] {
            let (fast, values) = measure(
                &services,
                &loaded.tenant_id,
                &case,
                grouping,
                Strategy::Rollups,
                samples,
            )
            .await;
            let p50 = percentile(&fast, 50.0);
            worst_p50 = worst_p50.max(p50);
            let period = serde_json::to_value(grouping).unwrap();
            let period = period.as_str().unwrap_or_default().to_string();
            let baseline = if case.has_rollups() {
                let (raw, raw_values) = measure(
                    &services,
                    &loaded.tenant_id,
                    &case,
                    grouping,
                    Strategy::Raw,
                    baseline_samples,
                )
                .await;
                assert_eq!(
                    values,
                    raw_values,
                    "{} {period}: rollups and raw facts disagree",
                    case.name()
                );
                let speedup = percentile(&raw, 50.0).as_secs_f64() / p50.as_secs_f64().max(1e-9);
                worst_speedup = worst_speedup.min(speedup);
                if speedup < TARGET_SPEEDUP {
                    misses.push(format!("{} {period}: {speedup:.1}× the baseline", case.name()));
                }
                Some((raw, speedup))
            } else {
                None
            };
            if p50 > TARGET_P50 {
                misses.push(format!("{} {period}: p50 {:.1} ms", case.name(), ms(p50)));
            }
            let (raw50, raw99, speedup) = match &baseline {
                Some((raw, speedup)) => (
                    format!("{:.1}", ms(percentile(raw, 50.0))),
                    format!("{:.1}", ms(percentile(raw, 99.0))),
                    format!("{speedup:.0}×"),
                ),
                None => ("–".into(), "–".into(), "(no separate raw path)".into()),
            };
            println!(
                "| {} | {period} | {values} | {:.1} | {:.1} | {raw50} | {raw99} | {speedup} |",
                case.name(),
                ms(p50),
                ms(percentile(&fast, 99.0)),
            );
        }
    }
    let speedup = if worst_speedup.is_finite() {
        format!("{worst_speedup:.0}×")
    } else {
        "n/a".into()
    };
    println!(
        "\nWorst p50: {:.1} ms (target < {} ms). Smallest speed-up over the baseline: {speedup} (target ≥ {TARGET_SPEEDUP}×).",
        ms(worst_p50),
        TARGET_P50.as_millis()
    );
    if misses.is_empty() {
        println!("Every report meets both targets.");
    } else {
        println!("Missed targets:\n- {}", misses.join("\n- "));
    }
}
