//! The write benchmark's baseline: the rows of one create, as one raw
//! transaction, committed one after another on one connection.

use std::{
    collections::BTreeMap,
    path::Path,
    time::{Duration, Instant},
};

use rapport_core::db::Db;
use sqlx::Connection;

use super::databases::{grown, has_table, prepare_tenant, table_counts, Backend, FreshDb};

/// The rows one REST create writes (customers, audit_log, report_facts, the hourly
/// and daily rollups, and the tenant's customer count where that table exists),
/// written with the fewest statements: one raw transaction on `$conn`.
macro_rules! baseline_tx {
    ($conn:expr, $tenant:expr, $n:expr, $counts:expr) => {{
        let now = chrono::Utc::now().timestamp_millis();
        let hour = now - now.rem_euclid(3_600_000);
        let day = now - now.rem_euclid(86_400_000);
        let id = uuid::Uuid::now_v7().to_string();
        let mut tx = $conn.begin().await.unwrap();
        sqlx::query(
            "insert into customers (id, tenant_id, email, first_name, last_name, gender, external_id, \
             assigned_user_id, assigned_team_id, created_at, updated_at, status, status_changed_at, \
             conversation_started_at) \
             values ($1, $2, $3, $4, $5, null, null, null, null, $6, $6, 'UNREAD', $6, $6)",
        )
        .bind(&id)
        .bind($tenant)
        .bind(format!("ada+{}@example.com", $n))
        .bind("Ada")
        .bind("Lovelace")
        .bind(now)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "insert into audit_log (id, tenant_id, at, actor_type, actor_id, action, resource_type, \
             resource_id, ip, request_id) values ($1, $2, $3, 'apikey', 'key_bench', 'customer.create', \
             'customer', $4, '127.0.0.1', $5)",
        )
        .bind(uuid::Uuid::now_v7().to_string())
        .bind($tenant)
        .bind(now)
        .bind(&id)
        .bind(uuid::Uuid::new_v4().to_string())
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "insert into report_facts (tenant_id, kind, at, value, agent_id, dim, subject, tags, dedupe_key) \
             values ($1, 'CONVERSATION_NEW', $2, 1, null, null, $3, null, null)",
        )
        .bind($tenant)
        .bind(now)
        .bind(&id)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "insert into report_rollups (tenant_id, kind, group_kind, hour, group_key, total, samples) \
             values ($1, 'CONVERSATION_NEW', '', $2, '', 1, 1) \
             on conflict (tenant_id, kind, group_kind, hour, group_key) do update \
             set total = report_rollups.total + excluded.total, samples = report_rollups.samples + excluded.samples",
        )
        .bind($tenant)
        .bind(hour)
        .execute(&mut *tx)
        .await
        .unwrap();
        sqlx::query(
            "insert into report_day_rollups (tenant_id, zone, kind, group_kind, day, group_key, total, samples) \
             values ($1, 'UTC', 'CONVERSATION_NEW', '', $2, '', 1, 1) \
             on conflict (tenant_id, zone, kind, group_kind, day, group_key) do update \
             set total = report_day_rollups.total + excluded.total, \
             samples = report_day_rollups.samples + excluded.samples",
        )
        .bind($tenant)
        .bind(day)
        .execute(&mut *tx)
        .await
        .unwrap();
        if $counts {
            sqlx::query(
                "insert into customer_counts (tenant_id, customers) values ($1, 1) \
                 on conflict (tenant_id) do update set customers = customer_counts.customers + 1",
            )
            .bind($tenant)
            .execute(&mut *tx)
            .await
            .unwrap();
        }
        tx.commit().await.unwrap();
    }};
}

/// The baseline's result: commits per second and each commit's latency.
pub(crate) struct Baseline {
    pub(crate) rate: f64,
    pub(crate) latencies: Vec<Duration>,
    pub(crate) grown: BTreeMap<String, i64>,
}

/// Sequential raw transactions on ONE connection of a fresh, migrated database of
/// `backend` (opened by `Db::connect`, so with the server's pragmas: WAL and
/// synchronous NORMAL on SQLite), for `duration`.
pub(crate) async fn baseline(backend: Backend, dir: &Path, duration: Duration) -> Baseline {
    let fresh = FreshDb::create(backend, dir, "baseline").await.unwrap();
    let (tenant, _) = prepare_tenant(&fresh.url).await;
    let db = Db::connect(&fresh.url).await.unwrap();
    let counts = has_table(&db, "customer_counts").await;
    let before = table_counts(&db).await;
    let mut latencies = Vec::new();
    let mut n = 0u64;
    macro_rules! run {
        ($conn:expr) => {{
            let mut conn = $conn;
            // One transaction alone, to list what it writes.
            baseline_tx!(conn, &tenant, n, counts);
            n += 1;
            let grown_by_one = grown(&before, &table_counts(&db).await);
            let started = Instant::now();
            while started.elapsed() < duration {
                let t0 = Instant::now();
                baseline_tx!(conn, &tenant, n, counts);
                latencies.push(t0.elapsed());
                n += 1;
            }
            (started.elapsed(), grown_by_one)
        }};
    }
    let (elapsed, grown_by_one) = match &db {
        // The writer pool's one connection, the one the server writes through.
        Db::Sqlite(pools) => run!(pools.writes.acquire().await.unwrap()),
        Db::Postgres(pool) => run!(pool.acquire().await.unwrap()),
    };
    db.close().await;
    fresh.drop_now().await;
    latencies.sort();
    Baseline {
        rate: latencies.len() as f64 / elapsed.as_secs_f64(),
        latencies,
        grown: grown_by_one,
    }
}
