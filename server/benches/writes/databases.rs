//! Databases of the write benchmark: a fresh one per backend and phase, its
//! tenant, and what a phase made it grow by.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// A fresh database of one backend: a file in a temporary directory, or a new
/// PostgreSQL database that is dropped with this value.
pub(crate) struct FreshDb {
    pub(crate) url: String,
    pub(crate) admin_url: Option<String>,
    pub(crate) name: String,
}

impl FreshDb {
    pub(crate) async fn create(backend: Backend, dir: &Path, label: &str) -> Result<FreshDb, String> {
        match backend {
            Backend::Sqlite => Ok(FreshDb {
                url: format!("sqlite://{}/{label}.db", dir.display()),
                admin_url: None,
                name: label.into(),
            }),
            Backend::Postgres => {
                let admin_url = postgres_admin_url();
                let admin = tokio::time::timeout(Duration::from_secs(15), Db::connect(&admin_url))
                    .await
                    .map_err(|_| "timed out".to_string())?
                    .map_err(|e| e.to_string())?;
                let name = format!(
                    "rapport_bench_{}_{label}_{}",
                    chrono::Utc::now().timestamp(),
                    &uuid::Uuid::new_v4().simple().to_string()[..8]
                );
                with_db!(&admin, |pool| sqlx::query(&format!("create database {name}"))
                    .execute(pool)
                    .await
                    .map(|_| ()))
                .map_err(|e| e.to_string())?;
                admin.close().await;
                Ok(FreshDb {
                    url: rapport_core::testing::replace_database(&admin_url, &name),
                    admin_url: Some(admin_url),
                    name,
                })
            }
        }
    }

    /// Drops a PostgreSQL database (a SQLite file goes with its directory).
    pub(crate) async fn drop_now(self) {
        if let Some(admin_url) = &self.admin_url {
            if let Ok(admin) = Db::connect(admin_url).await {
                let sql = format!("drop database if exists {} with (force)", self.name);
                let _ = with_db!(&admin, |pool| sqlx::query(&sql).execute(pool).await.map(|_| ()));
                admin.close().await;
            }
        }
    }
}

pub(crate) fn postgres_admin_url() -> String {
    std::env::var("RAPPORT_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// Migrates `url` and creates the bench tenant and its API key through the
/// service layer: `(tenant id, token)`.
pub(crate) async fn prepare_tenant(url: &str) -> (String, String) {
    let db = Db::connect(url).await.unwrap();
    db.migrate().await.unwrap();
    let services = Services::new(db.clone());
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
    let key = services.create_api_key(&tenant.id, "bench", &actor).await.unwrap();
    db.close().await;
    (tenant.id.into_string(), key.token)
}

/// Another tenant with an API key, made beside the running server; returns
/// `(tenant id, token)`.
pub(crate) async fn add_tenant(db: &Db, name: &str) -> (String, String) {
    let services = Services::new(db.clone());
    let actor = Actor::system("bench");
    let tenant = services
        .create_tenant(
            NewTenant {
                name: Some(name.into()),
                ..Default::default()
            },
            &actor,
        )
        .await
        .unwrap();
    let key = services.create_api_key(&tenant.id, "bench", &actor).await.unwrap();
    (tenant.id.into_string(), key.token)
}

/// Row counts of every table (migrations' bookkeeping excluded).
pub(crate) async fn table_counts(db: &Db) -> BTreeMap<String, i64> {
    let tables: Vec<String> = match db {
        Db::Sqlite(pools) => sqlx::query_scalar(
            "select name from sqlite_master where type = 'table' \
             and name not like 'sqlite_%' and name not like '_sqlx%'",
        )
        .fetch_all(&pools.reads)
        .await
        .unwrap(),
        Db::Postgres(pool) => sqlx::query_scalar(
            "select tablename::text from pg_tables where schemaname = current_schema() \
             and tablename not like '_sqlx%'",
        )
        .fetch_all(pool)
        .await
        .unwrap(),
    };
    let mut counts = BTreeMap::new();
    for table in tables {
        let sql = format!("select count(*) from \"{table}\"");
        let n: i64 = with_db!(db, |pool| sqlx::query_scalar(&sql).fetch_one(pool).await).unwrap();
        counts.insert(table, n);
    }
    counts
}

/// The tables whose row count grew between two snapshots, with how much.
pub(crate) fn grown(before: &BTreeMap<String, i64>, after: &BTreeMap<String, i64>) -> BTreeMap<String, i64> {
    after
        .iter()
        .filter_map(|(t, n)| {
            let d = n - before.get(t).copied().unwrap_or(0);
            (d != 0).then(|| (t.clone(), d))
        })
        .collect()
}

pub(crate) async fn has_table(db: &Db, table: &str) -> bool {
    let n: i64 = match db {
        Db::Sqlite(pools) => {
            sqlx::query_scalar("select count(*) from sqlite_master where type = 'table' and name = $1")
                .bind(table)
                .fetch_one(&pools.reads)
                .await
                .unwrap()
        }
        Db::Postgres(pool) => {
            sqlx::query_scalar("select count(*) from pg_tables where schemaname = current_schema() and tablename = $1")
                .bind(table)
                .fetch_one(pool)
                .await
                .unwrap()
        }
    };
    n > 0
}
