//! Test support: a fresh, migrated database per test, on SQLite and (when
//! `RAPPORT_TEST_POSTGRES_URL` names a server) on PostgreSQL.
//!
//! Every storage and HTTP test is written once as `async fn(TestDb)` and run on both
//! backends with [`backend_tests!`](crate::backend_tests). Each run gets its own
//! database: a new SQLite file in a temporary directory, or a new PostgreSQL database
//! `rapport_t_<unix seconds>_<random>` created from the admin URL. Databases left by
//! earlier runs are dropped once they are an hour old.

use crate::{
    db::Db,
    error::CoreResult,
    ids::{TenantId, WebhookId},
    media_store::MediaStore,
    Services,
};

/// The environment variable naming the PostgreSQL server for tests, e.g.
/// `postgres://postgres@127.0.0.1:5432/test`.
pub const POSTGRES_URL_VAR: &str = "RAPPORT_TEST_POSTGRES_URL";

/// An isolated, migrated test database.
pub struct TestDb {
    /// The database URL, for tests that start a `rapport` process against it.
    pub url: String,
    /// The open pool.
    pub db: Db,
    /// The media store of this database's services: a directory of its own,
    /// as an instance's default is.
    pub media: MediaStore,
    _dir: Option<tempfile::TempDir>,
    _media_dir: tempfile::TempDir,
}

impl TestDb {
    /// Services over this database and its media store.
    pub fn services(&self) -> Services {
        Services::new(self.db.clone()).with_media_store(self.media.clone())
    }

    /// The media store's URL, for a `rapport` process started on this
    /// database (`RAPPORT_MEDIA_STORE`).
    pub fn media_url(&self) -> String {
        format!("file://{}", self._media_dir.path().display())
    }

    /// The database and a media directory of its own, for it.
    fn new(url: String, db: Db, dir: Option<tempfile::TempDir>) -> CoreResult<TestDb> {
        let media_dir = tempfile::TempDir::with_prefix("rapport-media-")
            .map_err(|e| crate::error::CoreError::Internal(format!("temp dir: {e}")))?;
        Ok(TestDb {
            url,
            db,
            media: MediaStore::local(media_dir.path())?,
            _dir: dir,
            _media_dir: media_dir,
        })
    }

    /// A fresh SQLite database in its own temporary directory.
    pub async fn sqlite() -> CoreResult<TestDb> {
        Self::sqlite_until(None).await
    }

    /// A fresh SQLite database migrated up to and including `version` (`None`:
    /// every migration), as a release that stopped there left it: an upgrade
    /// test fills its tables, then [`Db::migrate`] applies the rest.
    pub async fn sqlite_until(version: Option<i64>) -> CoreResult<TestDb> {
        let dir = tempfile::TempDir::with_prefix("rapport-test-")
            .map_err(|e| crate::error::CoreError::Internal(format!("temp dir: {e}")))?;
        let url = format!("sqlite://{}/rapport.db", dir.path().display());
        let db = Db::connect(&url).await?;
        db.migrate_until(version).await?;
        TestDb::new(url, db, Some(dir))
    }

    /// A fresh PostgreSQL database, or `None` when [`POSTGRES_URL_VAR`] is unset.
    pub async fn postgres() -> CoreResult<Option<TestDb>> {
        Self::postgres_until(None).await
    }

    /// [`TestDb::sqlite_until`] on a fresh PostgreSQL database, or `None` when
    /// [`POSTGRES_URL_VAR`] is unset.
    pub async fn postgres_until(version: Option<i64>) -> CoreResult<Option<TestDb>> {
        let Ok(admin_url) = std::env::var(POSTGRES_URL_VAR) else {
            return Ok(None);
        };
        let admin = Db::connect(&admin_url).await?;
        let now = chrono::Utc::now().timestamp();
        drop_stale_databases(&admin, now).await?;
        let name = format!("rapport_t_{now}_{}", uuid::Uuid::new_v4().simple());
        crate::with_db!(&admin, |pool| sqlx::query(&format!("create database {name}"))
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        admin.close().await;
        let url = replace_database(&admin_url, &name);
        let db = Db::connect(&url).await?;
        db.migrate_until(version).await?;
        Ok(Some(TestDb::new(url, db, None)?))
    }
}

/// Queues `per_endpoint` due deliveries to each of `endpoint_ids` (webhook
/// endpoints of `tenant_id`) straight into the outbox, in bulk: one event per
/// `customer.created`-shaped payload, delivered to every listed endpoint (as
/// [`crate::events::enqueue`] would), each with its own customer so that nothing
/// waits on ordering. Multi-row inserts, a few thousand rows per transaction:
/// 100,000 deliveries take seconds rather than the minutes the services would.
/// For tests and benchmarks that need a large backlog, such as failing endpoints
/// (e.g. `http://unresolvable.invalid/hook`) with 100,000 pending deliveries.
/// Returns the number of deliveries queued.
pub async fn queue_backlog(
    services: &Services,
    tenant_id: &TenantId,
    endpoint_ids: &[WebhookId],
    per_endpoint: usize,
) -> CoreResult<usize> {
    // Events per statement: 7 parameters each, and a delivery row per endpoint.
    const EVENTS: usize = 200;
    // Statements per transaction: the writer is never held for long.
    const STATEMENTS: usize = 10;
    let now = crate::time::now_ms();
    let mut queued = 0;
    let mut left = per_endpoint;
    while left > 0 {
        let mut tx = services.db().begin().await?;
        for _ in 0..STATEMENTS {
            let n = left.min(EVENTS);
            if n == 0 {
                break;
            }
            left -= n;
            let ids: Vec<String> = (0..n).map(|_| crate::events::new_event_id()).collect();
            let sql = format!(
                "insert into events (id, tenant_id, type, customer_id, actor, payload, created_at) values {}",
                rows(n, 7)
            );
            crate::with_tx!(&mut tx, |conn| {
                let mut q = sqlx::query(&sql);
                for id in &ids {
                    q = q
                        .bind(id)
                        .bind(tenant_id)
                        .bind("customer.created")
                        .bind(id)
                        .bind("system:backlog")
                        .bind(format!(r#"{{"id":"{id}","firstName":"Backlog"}}"#))
                        .bind(now);
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
            for endpoint_id in endpoint_ids {
                // `$1` is the time; then five parameters a row.
                let sql = format!(
                    "insert into webhook_deliveries (id, tenant_id, endpoint_id, event_id, ordering_key, state, \
                     attempts, next_attempt_at, created_at) values {}",
                    (0..n)
                        .map(|i| {
                            let p = i * 5;
                            format!(
                                "(${}, ${}, ${}, ${}, ${}, 'pending', 0, $1, $1)",
                                p + 2,
                                p + 3,
                                p + 4,
                                p + 5,
                                p + 6
                            )
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                crate::with_tx!(&mut tx, |conn| {
                    let mut q = sqlx::query(&sql).bind(now);
                    for id in &ids {
                        q = q
                            .bind(format!("dlv_{}", uuid::Uuid::now_v7().simple()))
                            .bind(tenant_id)
                            .bind(endpoint_id)
                            .bind(id)
                            .bind(id);
                    }
                    q.execute(conn).await.map(|r| r.rows_affected())
                })?;
                queued += n;
            }
        }
        tx.commit().await?;
    }
    services.wake_outbox();
    Ok(queued)
}

/// `($1, …, $cols), ($cols+1, …), …` for a multi-row insert.
fn rows(rows: usize, cols: usize) -> String {
    (0..rows)
        .map(|row| format!("({})", crate::db::placeholders(row * cols + 1, cols)))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn drop_stale_databases(admin: &Db, now: i64) -> CoreResult<()> {
    let names: Vec<String> = crate::with_db!(admin, |pool| sqlx::query_scalar(
        "select datname from pg_database where datname like 'rapport_t_%'"
    )
    .fetch_all(pool)
    .await)?;
    for name in names {
        let created: i64 = name.split('_').nth(2).and_then(|s| s.parse().ok()).unwrap_or(now);
        if now - created > 3600 {
            let sql = format!("drop database if exists {name} with (force)");
            // Another test process may be dropping it at the same moment; that is fine.
            let _ = crate::with_db!(admin, |pool| sqlx::query(&sql)
                .execute(pool)
                .await
                .map(|r| r.rows_affected()));
        }
    }
    Ok(())
}

/// Replaces the database name (the path) of a PostgreSQL URL, keeping its query.
pub fn replace_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let authority_start = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[authority_start..].find('/') {
        Some(slash) => &base[..authority_start + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

/// Runs each listed `async fn(TestDb)` as two tests: `<name>::sqlite` and
/// `<name>::postgres`. The PostgreSQL one reports itself skipped (and passes) when
/// `RAPPORT_TEST_POSTGRES_URL` is unset; the test command and CI always set it.
#[macro_export]
macro_rules! backend_tests {
    ($($name:ident),+ $(,)?) => {
        $(
            mod $name {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let db = $crate::testing::TestDb::sqlite().await.expect("sqlite test database");
                    super::$name(db).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    match $crate::testing::TestDb::postgres().await.expect("postgres test database") {
                        Some(db) => super::$name(db).await,
                        None => eprintln!("skipped: {} is not set", $crate::testing::POSTGRES_URL_VAR),
                    }
                }
            }
        )+
    };
}

/// For tests that run the engines' timers by hand ([`Services::run_job`]):
/// the server's own kinds of job (mail, retention, sweeps, probes) do nothing.
pub struct EnginesOnly;

impl crate::usecases::jobs::InstanceJobs for EnginesOnly {
    async fn mail(&self, _: &crate::jobs::Job) -> crate::error::CoreResult<()> {
        Ok(())
    }

    async fn retention(&self, _: &crate::jobs::Job) -> crate::error::CoreResult<()> {
        Ok(())
    }

    async fn presence(&self, _: &crate::jobs::Job) -> crate::error::CoreResult<()> {
        Ok(())
    }

    async fn recording_ends(&self, _: &crate::jobs::Job) -> crate::error::CoreResult<()> {
        Ok(())
    }

    fn probe(&self, _: &crate::jobs::Job) -> crate::error::CoreResult<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::replace_database;

    #[test]
    fn replaces_database_name() {
        assert_eq!(
            replace_database("postgres://p@127.0.0.1:5432/test", "x"),
            "postgres://p@127.0.0.1:5432/x"
        );
        assert_eq!(
            replace_database("postgres://p@h/test?sslmode=disable", "x"),
            "postgres://p@h/x?sslmode=disable"
        );
        assert_eq!(replace_database("postgres://p@h", "x"), "postgres://p@h/x");
    }
}
