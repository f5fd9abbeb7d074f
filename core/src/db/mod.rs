//! Storage on SQLite (the embedded default) or PostgreSQL, behind one type.
//!
//! Queries are written once, with `$1` placeholders that both backends accept, and
//! run through [`with_db!`](crate::with_db) / [`with_tx!`](crate::with_tx), which
//! expand the same code once per backend so each copy is type-checked against its own
//! driver. Where the dialects really differ (claiming work with `SKIP LOCKED`, say),
//! a service matches on [`Db`] and writes both.
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

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("./migrations/postgres");

/// A connection pool to one of the two supported databases.
#[derive(Clone, Debug)]
pub enum Db {
    /// The embedded default: one file, WAL mode.
    Sqlite(SqlitePool),
    /// For several instances and larger installations.
    Postgres(PgPool),
}

/// Which backend a [`Db`] talks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite.
    Sqlite,
    /// PostgreSQL.
    Postgres,
}

/// An open transaction on either backend. Dropping it without [`Tx::commit`] rolls back.
pub enum Tx {
    /// A SQLite transaction.
    Sqlite(Transaction<'static, Sqlite>),
    /// A PostgreSQL transaction.
    Postgres(Transaction<'static, Postgres>),
}

/// Runs `$body` with `$conn` bound to the pool of whichever backend `$db` is.
#[macro_export]
macro_rules! with_db {
    ($db:expr, |$conn:ident| $body:expr) => {
        match $db {
            $crate::db::Db::Sqlite($conn) => $body,
            $crate::db::Db::Postgres($conn) => $body,
        }
    };
}

/// Runs `$body` with `$conn` bound to the connection of an open [`Tx`].
#[macro_export]
macro_rules! with_tx {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(t) => {
                let $conn = &mut **t;
                $body
            }
            $crate::db::Tx::Postgres(t) => {
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
                .busy_timeout(Duration::from_secs(10));
            let pool = SqlitePoolOptions::new()
                .max_connections(8)
                // The file is local and the connection's worker thread cannot go
                // stale the way a network connection can, so the default ping
                // before every acquire would only add a round trip to each query.
                .test_before_acquire(false)
                .connect_with(options)
                .await?;
            Ok(Db::Sqlite(pool))
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
            Db::Sqlite(pool) => SQLITE_MIGRATIONS.run(pool).await?,
            Db::Postgres(pool) => POSTGRES_MIGRATIONS.run(pool).await?,
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

    /// Starts a transaction. On SQLite it is `BEGIN IMMEDIATE`: it takes the write
    /// lock at once (waiting up to the busy timeout), so a transaction that reads and
    /// then writes can never fail on a lock upgrade. SQLite has one writer anyway.
    pub async fn begin(&self) -> CoreResult<Tx> {
        Ok(match self {
            Db::Sqlite(pool) => Tx::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?),
            Db::Postgres(pool) => Tx::Postgres(pool.begin().await?),
        })
    }

    /// Checks that the database answers (`SELECT 1`).
    pub async fn ping(&self) -> CoreResult<()> {
        with_db!(self, |pool| sqlx::query("select 1").execute(pool).await.map(|_| ()))?;
        Ok(())
    }

    /// Closes every connection; used on shutdown.
    pub async fn close(&self) {
        with_db!(self, |pool| pool.close().await)
    }
}

impl Tx {
    /// Commits the transaction.
    pub async fn commit(self) -> CoreResult<()> {
        match self {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::Postgres(t) => t.commit().await?,
        }
        Ok(())
    }
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
