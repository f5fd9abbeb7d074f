//! Test support: a fresh, migrated database per test, on SQLite and (when
//! `RAPPORT_TEST_POSTGRES_URL` names a server) on PostgreSQL.
//!
//! Every storage and HTTP test is written once as `async fn(TestDb)` and run on both
//! backends with [`backend_tests!`](crate::backend_tests). Each run gets its own
//! database: a new SQLite file in a temporary directory, or a new PostgreSQL database
//! `rapport_t_<unix seconds>_<random>` created from the admin URL. Databases left by
//! earlier runs are dropped once they are an hour old.

use crate::{db::Db, error::CoreResult, Services};

/// The environment variable naming the PostgreSQL server for tests, e.g.
/// `postgres://postgres@127.0.0.1:5432/test`.
pub const POSTGRES_URL_VAR: &str = "RAPPORT_TEST_POSTGRES_URL";

/// An isolated, migrated test database.
pub struct TestDb {
    /// The database URL, for tests that start a `rapport` process against it.
    pub url: String,
    /// The open pool.
    pub db: Db,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// Services over this database.
    pub fn services(&self) -> Services {
        Services::new(self.db.clone())
    }

    /// A fresh SQLite database in its own temporary directory.
    pub async fn sqlite() -> CoreResult<TestDb> {
        let dir = tempfile::TempDir::with_prefix("rapport-test-")
            .map_err(|e| crate::error::CoreError::Internal(format!("temp dir: {e}")))?;
        let url = format!("sqlite://{}/rapport.db", dir.path().display());
        let db = Db::connect(&url).await?;
        db.migrate().await?;
        Ok(TestDb {
            url,
            db,
            _dir: Some(dir),
        })
    }

    /// A fresh PostgreSQL database, or `None` when [`POSTGRES_URL_VAR`] is unset.
    pub async fn postgres() -> CoreResult<Option<TestDb>> {
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
        db.migrate().await?;
        Ok(Some(TestDb { url, db, _dir: None }))
    }
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
fn replace_database(url: &str, name: &str) -> String {
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
