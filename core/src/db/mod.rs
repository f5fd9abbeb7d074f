//! Storage on SQLite (the embedded default) or PostgreSQL, behind one type.
//!
//! Queries are written once, with `$1` placeholders that both backends accept, and
//! run through [`with_db!`](crate::with_db) / [`with_tx!`](crate::with_tx), which
//! expand the same code once per backend so each copy is type-checked against its own
//! driver. Where the dialects really differ (claiming work with `SKIP LOCKED`, say),
//! a service matches on [`Db`] and writes both.
//!
//! On SQLite there is **one writer**: every transaction ([`Db::begin`]) and every
//! write outside one ([`Db::writer`]) goes through a single connection, and reads
//! go through a pool of read-only connections. Requests that want to write queue
//! for that connection in order (the pool's fair semaphore) instead of each taking
//! SQLite's file lock in turn and sleeping in its busy handler, which under load
//! made writes wait up to a second while the database sat idle between retries.
//! In WAL mode readers never wait for the writer, and a read-only connection that
//! is handed a write fails loudly, so a write that bypasses the writer cannot slip
//! in unnoticed. PostgreSQL has real row locks and MVCC: there both roles share
//! one pool.
//!
//! Conventions that keep the one-code-path promise:
//! - times are `bigint` unix milliseconds (UTC), converted by [`crate::time`];
//! - ids are text, JSON documents are text, booleans are `boolean`;
//! - unique constraints have explicit names (`<table>_<columns>_key`) so a violation
//!   maps to a field-level conflict on either backend ([`unique_violation`]).

use std::{path::Path, str::FromStr, time::Duration};

use sqlx::{
    postgres::{PgConnectOptions, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    PgPool, Postgres, Sqlite, SqlitePool, Transaction,
};

use crate::error::{CoreError, CoreResult};

mod scoped;
mod sums;
pub use scoped::{keyed_page, page, AnyRow, Arg, TenantTable};
pub use sums::{KeyPart, SumTable};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// The first migrations of a backend, as [`Db::migrate_until`] applies them.
#[cfg(feature = "testing")]
#[derive(Debug)]
struct MigrationsUntil(Vec<sqlx::migrate::Migration>);

#[cfg(feature = "testing")]
impl<'s> sqlx::migrate::MigrationSource<'s> for MigrationsUntil {
    fn resolve(
        self,
    ) -> futures_util::future::BoxFuture<'s, Result<Vec<sqlx::migrate::Migration>, sqlx::error::BoxDynError>> {
        Box::pin(async move { Ok(self.0) })
    }
}

/// A connection pool to one of the two supported databases.
#[derive(Clone, Debug)]
pub enum Db {
    /// The embedded default: one file, WAL mode.
    Sqlite(SqlitePools),
    /// For several instances and larger installations.
    Postgres(PgPool),
}

/// SQLite's two pools: what [`with_db!`](crate::with_db) reads through, and the
/// single writer connection.
#[derive(Clone, Debug)]
pub struct SqlitePools {
    /// Read-only connections, or the writer itself in the view [`Db::writer`] gives.
    pub reads: SqlitePool,
    /// The one connection that writes.
    pub writes: SqlitePool,
}

/// Which backend a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// An open transaction on either backend, with the additions to shared rows it
/// holds back to its commit ([`sums`]). Dropping it without [`Tx::commit`] rolls
/// back, additions included.
pub struct Tx {
    conn: TxConn,
    sums: sums::Sums,
    /// On PostgreSQL, the pool and the notifications to send once committed.
    notices: Option<(PgPool, Vec<(&'static str, String)>)>,
}

/// The connection of an open [`Tx`], on its backend.
pub enum TxConn {
    /// A SQLite transaction.
    Sqlite(Transaction<'static, Sqlite>),
    /// A PostgreSQL transaction.
    Postgres(Transaction<'static, Postgres>),
}

/// Runs `$body` with `$conn` bound to the pool of whichever backend `$db` is. On
/// SQLite that is the read-only pool, unless `$db` is the view [`Db::writer`] gives.
#[macro_export]
macro_rules! with_db {
    ($db:expr, |$conn:ident| $body:expr) => {
        match $db {
            $crate::db::Db::Sqlite(pools) => {
                let $conn = &pools.reads;
                $body
            }
            $crate::db::Db::Postgres($conn) => $body,
        }
    };
}

/// Runs `$body` with `$conn` bound to the connection of an open [`Tx`].
#[macro_export]
macro_rules! with_tx {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match ($tx).conn_mut() {
            $crate::db::TxConn::Sqlite(t) => {
                let $conn = &mut **t;
                $body
            }
            $crate::db::TxConn::Postgres(t) => {
                let $conn = &mut **t;
                $body
            }
        }
    };
}

impl Db {
    /// Connects to `url` (`sqlite://…` or `postgres://…`). A SQLite file and its
    /// directory are created when missing.
    pub async fn connect(url: &str) -> CoreResult<Db> {
        if url.starts_with("sqlite:") {
            let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
            let path = path.split('?').next().unwrap_or(path);
            if !path.is_empty() && path != ":memory:" {
                if let Some(dir) = Path::new(path).parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| CoreError::Internal(format!("cannot create {}: {e}", dir.display())))?;
                }
            }
            let options = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                // Only another process (the CLI beside a running server) can hold
                // the lock now; this instance's own writers queue in the pool.
                .busy_timeout(Duration::from_secs(10));
            // The writer first: it creates the file and the WAL that the read-only
            // connections need to open.
            let writes = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                // A writer that waits longer than this is stuck behind a bug (a
                // transaction held across I/O), and an error says so.
                .acquire_timeout(Duration::from_secs(30))
                // The file is local and the connection's worker thread cannot go
                // stale the way a network connection can, so the default ping
                // before every acquire would only add a round trip to each query.
                .test_before_acquire(false)
                .connect_with(options.clone())
                .await?;
            let reads = SqlitePoolOptions::new()
                .max_connections(8)
                .test_before_acquire(false)
                .connect_with(options.read_only(true))
                .await?;
            Ok(Db::Sqlite(SqlitePools { reads, writes }))
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let options = PgConnectOptions::from_str(url)?;
            let pool = PgPoolOptions::new()
                .max_connections(16)
                .acquire_timeout(Duration::from_secs(10))
                .connect_with(options)
                .await?;
            Ok(Db::Postgres(pool))
        } else {
            Err(CoreError::Internal(format!(
                "unsupported database URL scheme (expected sqlite:// or postgres://): {}",
                redact_url(url)
            )))
        }
    }

    /// Applies every pending migration of this backend.
    pub async fn migrate(&self) -> CoreResult<()> {
        match self {
            Db::Sqlite(pools) => SQLITE_MIGRATIONS.run(&pools.writes).await?,
            Db::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await?,
        }
        Ok(())
    }

    /// Applies this backend's migrations up to and including `version`
    /// (`None`: all of them), for upgrade tests that fill the tables as an
    /// older release left them before [`Db::migrate`] applies the rest.
    #[cfg(feature = "testing")]
    pub async fn migrate_until(&self, version: Option<i64>) -> CoreResult<()> {
        let until = |all: &sqlx::migrate::Migrator| {
            MigrationsUntil(
                all.iter()
                    .filter(|m| version.is_none_or(|v| m.version <= v))
                    .cloned()
                    .collect(),
            )
        };
        match self {
            Db::Sqlite(pools) => {
                sqlx::migrate::Migrator::new(until(&SQLITE_MIGRATIONS))
                    .await?
                    .run(&pools.writes)
                    .await?
            }
            Db::Postgres(pool) => {
                sqlx::migrate::Migrator::new(until(&POSTGRES_MIGRATIONS))
                    .await?
                    .run(pool)
                    .await?
            }
        }
        Ok(())
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// The same database as seen by writes outside a transaction: on SQLite,
    /// [`with_db!`](crate::with_db) over this view runs on the single writer
    /// connection. On PostgreSQL it is the same pool.
    pub fn writer(&self) -> Db {
        match self {
            Db::Sqlite(pools) => Db::Sqlite(SqlitePools {
                reads: pools.writes.clone(),
                writes: pools.writes.clone(),
            }),
            Db::Postgres(pool) => Db::Postgres(pool.clone()),
        }
    }

    /// Starts a transaction, always on the writer. On SQLite it is `BEGIN
    /// IMMEDIATE`: it takes the write lock at once, so a transaction that reads and
    /// then writes can never fail on a lock upgrade (another process, the CLI, may
    /// still hold it; then it waits up to the busy timeout).
    pub async fn begin(&self) -> CoreResult<Tx> {
        let (conn, notices) = match self {
            Db::Sqlite(pools) => (TxConn::Sqlite(pools.writes.begin_with("BEGIN IMMEDIATE").await?), None),
            Db::Postgres(pool) => (TxConn::Postgres(pool.begin().await?), Some((pool.clone(), Vec::new()))),
        };
        Ok(Tx {
            conn,
            sums: sums::Sums::default(),
            notices,
        })
    }

    /// Checks that the database answers (`SELECT 1`).
    pub async fn ping(&self) -> CoreResult<()> {
        with_db!(self, |pool| sqlx::query("select 1").execute(pool).await.map(|_| ()))?;
        Ok(())
    }

    /// Closes every connection; used on shutdown.
    pub async fn close(&self) {
        match self {
            Db::Sqlite(pools) => {
                pools.reads.close().await;
                pools.writes.close().await;
            }
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

impl Tx {
    /// The connection, for [`with_tx!`](crate::with_tx).
    pub fn conn_mut(&mut self) -> &mut TxConn {
        &mut self.conn
    }

    /// Notes `deltas` (one per value column of `table`) for its row `key`, to be
    /// added just before the commit ([`sums`]).
    pub fn add(&mut self, table: &'static SumTable, key: Vec<KeyPart>, deltas: &[i64]) {
        self.sums.add(table, key, deltas);
    }

    /// Adds what [`Tx::add`] noted so far, now. [`Tx::commit`] does it anyway;
    /// call this only to read such a row back inside the transaction.
    pub async fn apply_sums(&mut self) -> CoreResult<()> {
        for (sql, rows) in self.sums.take() {
            with_tx!(&mut *self, |conn| {
                let mut q = sqlx::query(&sql);
                for (key, sums) in &rows {
                    for part in key {
                        q = match part {
                            KeyPart::Text(text) => q.bind(text),
                            KeyPart::Int(n) => q.bind(n),
                        };
                    }
                    for sum in sums {
                        q = q.bind(sum);
                    }
                }
                q.execute(conn).await.map(|r| r.rows_affected())
            })?;
        }
        Ok(())
    }

    /// Whether [`Tx::notify_after_commit`] sends anything: on PostgreSQL.
    pub fn notifies(&self) -> bool {
        self.notices.is_some()
    }

    /// On PostgreSQL, sends `NOTIFY channel, payload` once this transaction has
    /// committed, in a transaction of its own; on SQLite (one instance, nobody
    /// else to tell) nothing.
    ///
    /// Not in this transaction, because PostgreSQL serialises the commits of
    /// every transaction that notifies, in the whole database, for the length of
    /// each one's flush to disk: with the notification inside it, every write of
    /// every tenant waited for the flushes of all the others in turn. The
    /// notification's own transaction waits for no flush
    /// (`synchronous_commit` off: it stores nothing). What this costs: an
    /// instance that dies between the two commits announces nothing of that
    /// write, and the other instances' screens show it when they next read it.
    pub fn notify_after_commit(&mut self, channel: &'static str, payload: String) {
        if let Some((_, notices)) = &mut self.notices {
            notices.push((channel, payload));
        }
    }

    /// Adds what [`Tx::add`] noted, commits the transaction, then sends what
    /// [`Tx::notify_after_commit`] noted.
    pub async fn commit(mut self) -> CoreResult<()> {
        self.apply_sums().await?;
        match self.conn {
            TxConn::Sqlite(t) => t.commit().await?,
            TxConn::Postgres(t) => t.commit().await?,
        }
        if let Some((pool, notices)) = self.notices.filter(|(_, notices)| !notices.is_empty()) {
            // The write has committed: a notification that fails is logged, not
            // returned, so that the caller does not take the write for failed.
            if let Err(e) = notify(&pool, &notices).await {
                tracing::warn!(error = %e, "could not announce a committed change to the other instances");
            }
        }
        Ok(())
    }
}

/// Sends `notices` in one statement, in a transaction that does not wait for
/// its commit to reach the disk (see [`Tx::notify_after_commit`]).
async fn notify(pool: &PgPool, notices: &[(&'static str, String)]) -> Result<(), sqlx::Error> {
    let (channels, payloads): (Vec<&str>, Vec<&str>) = notices.iter().map(|(c, p)| (*c, p.as_str())).unzip();
    sqlx::query(
        "select set_config('synchronous_commit', 'off', true), pg_notify(n.channel, n.payload) \
         from unnest($1::text[], $2::text[]) with ordinality as n(channel, payload, i) order by n.i",
    )
    .bind(channels)
    .bind(payloads)
    .execute(pool)
    .await
    .map(|_| ())
}

/// If `err` is a violation of the unique constraint `constraint`, returns true.
///
/// PostgreSQL reports the constraint's name. SQLite reports the columns
/// (`UNIQUE constraint failed: users.tenant_id, users.email`), so the caller passes
/// both: the name for PostgreSQL and the `table.column` list for SQLite.
pub fn unique_violation(err: &sqlx::Error, constraint: &str, sqlite_columns: &str) -> bool {
    let Some(db_err) = err.as_database_error() else {
        return false;
    };
    if !matches!(db_err.kind(), sqlx::error::ErrorKind::UniqueViolation) {
        return false;
    }
    match db_err.constraint() {
        Some(name) => name == constraint,
        None => db_err.message().contains(sqlite_columns),
    }
}

/// `$first, $first+1, …` for `count` parameters, to build an `in (…)` list that both
/// backends accept. Callers bind the values in the same order.
pub fn placeholders(first: usize, count: usize) -> String {
    (first..first + count)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Hides the password in a database URL, for logs and error messages.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{}:***{}", &url[..scheme_end + 3], user, &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::redact_url;

    #[test]
    fn placeholder_lists() {
        assert_eq!(super::placeholders(2, 3), "$2, $3, $4");
        assert_eq!(super::placeholders(1, 0), "");
    }

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(redact_url("postgres://u:secret@h/db"), "postgres://u:***@h/db");
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("sqlite://data/rapport.db"), "sqlite://data/rapport.db");
    }
}
