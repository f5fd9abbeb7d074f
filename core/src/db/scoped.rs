//! Reads of a tenant's table, written once: one row (or one value of a row) by
//! id, and a page.
//!
//! Every tenant-owned table has `tenant_id` and `id` columns. A [`TenantTable`]
//! names the table, the columns its row type reads and what a missing row is
//! called, and then reads a row of a tenant ([`TenantTable::get`], or
//! [`TenantTable::get_in`] inside a transaction: another tenant's row answers
//! `NotFound`, exactly as a missing one), some of its columns
//! ([`TenantTable::read`]) or a page of them ([`TenantTable::page`]).
//!
//! Every paged list, filtered or not, is [`page`]: the count and the rows over the
//! same arguments ([`Arg`]), the rows in an order that ends in a unique column so
//! pages never overlap. [`keyed_page`] is its common case: the tenant and one more
//! key.

use sqlx::{postgres::PgRow, sqlite::SqliteRow, FromRow};

use super::{Db, Tx};
use crate::{
    error::{CoreError, CoreResult},
    ids::TenantId,
    validate::Paging,
};

/// A row type that both backends read.
pub trait AnyRow: Send + Unpin + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> {}

impl<T> AnyRow for T where T: Send + Unpin + for<'r> FromRow<'r, SqliteRow> + for<'r> FromRow<'r, PgRow> {}

/// A tenant-owned table as its reads see it.
#[derive(Debug, Clone, Copy)]
pub struct TenantTable {
    /// The table.
    pub table: &'static str,
    /// The columns its row type reads, comma-separated.
    pub columns: &'static str,
    /// What a row is called in `NotFound` (`"user"`, `"team"`…).
    pub what: &'static str,
    /// What else a row of this kind must satisfy, as ` and …` (`" and not receiver"`),
    /// or empty: rows that fail it answer as missing ones.
    pub narrow: &'static str,
}

impl TenantTable {
    /// A table read by its columns named at each read ([`TenantTable::read`]):
    /// all columns for [`TenantTable::get`], nothing narrowed.
    pub const fn new(table: &'static str, what: &'static str) -> Self {
        TenantTable {
            table,
            columns: "*",
            what,
            narrow: "",
        }
    }

    fn by_id(&self, columns: &str) -> String {
        format!(
            "select {columns} from {} where tenant_id = $1 and id = $2{}",
            self.table, self.narrow
        )
    }

    /// The tenant's row `id`, or `NotFound`.
    pub async fn get<R: AnyRow>(&self, db: &Db, tenant_id: &TenantId, id: &str) -> CoreResult<R> {
        self.read(db, tenant_id, id, self.columns).await
    }

    /// [`TenantTable::get`] inside `tx`.
    pub async fn get_in<R: AnyRow>(&self, tx: &mut Tx, tenant_id: &TenantId, id: &str) -> CoreResult<R> {
        self.read_in(tx, tenant_id, id, self.columns).await
    }

    /// Some columns of the tenant's row `id` (`columns`, read as `R`: a tuple,
    /// or a one-tuple for one value), or `NotFound`.
    pub async fn read<R: AnyRow>(&self, db: &Db, tenant_id: &TenantId, id: &str, columns: &str) -> CoreResult<R> {
        let sql = self.by_id(columns);
        let row: Option<R> = crate::with_db!(db, |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.ok_or(CoreError::NotFound(self.what))
    }

    /// [`TenantTable::read`] inside `tx`.
    pub async fn read_in<R: AnyRow>(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        id: &str,
        columns: &str,
    ) -> CoreResult<R> {
        let sql = self.by_id(columns);
        let row: Option<R> = crate::with_tx!(tx, |conn| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(conn)
            .await)?;
        row.ok_or(CoreError::NotFound(self.what))
    }

    /// A page of the tenant's rows in `order` (an `order by` list that ends in
    /// a unique column, so pages never overlap), with how many there are in all.
    pub async fn page<R: AnyRow>(
        &self,
        db: &Db,
        tenant_id: &TenantId,
        order: &str,
        paging: &Paging,
    ) -> CoreResult<(i64, Vec<R>)> {
        let rows_of = format!("from {} where tenant_id = $1{}", self.table, self.narrow);
        page(
            db,
            &format!("select count(*) {rows_of}"),
            &format!("select {} {rows_of} order by {order} limit $2 offset $3", self.columns),
            &[Arg::from(tenant_id)],
            paging,
        )
        .await
    }
}

/// A value bound to a placeholder of a statement built at run time: a paged
/// list's filters, each of which may be absent (`$n is null or …`).
#[derive(Debug, Clone, PartialEq)]
pub enum Arg {
    /// Text, or null.
    Text(Option<String>),
    /// A 64-bit integer (times are unix milliseconds), or null.
    Int(Option<i64>),
}

impl From<&TenantId> for Arg {
    fn from(id: &TenantId) -> Self {
        Arg::Text(Some(id.to_string()))
    }
}

impl From<&str> for Arg {
    fn from(text: &str) -> Self {
        Arg::Text(Some(text.to_string()))
    }
}

impl From<Option<&str>> for Arg {
    fn from(text: Option<&str>) -> Self {
        Arg::Text(text.map(str::to_string))
    }
}

impl From<Option<String>> for Arg {
    fn from(text: Option<String>) -> Self {
        Arg::Text(text)
    }
}

impl From<Option<i64>> for Arg {
    fn from(n: Option<i64>) -> Self {
        Arg::Int(n)
    }
}

/// Binds [`Arg`]s to a query, in order, on either backend.
macro_rules! bind_args {
    ($query:expr, $args:expr) => {{
        let mut query = $query;
        for arg in $args {
            query = match arg {
                Arg::Text(text) => query.bind(text.clone()),
                Arg::Int(n) => query.bind(*n),
            };
        }
        query
    }};
}

/// A page of rows, with how many there are in all: `count` counts them and
/// `rows` reads the page, both over `args` as `$1…$n`; `rows` ends in
/// `limit $n+1 offset $n+2`, after an `order by` that ends in a unique column.
/// Every paged list is this one function, so each reads its count and its rows
/// the same way.
pub async fn page<R: AnyRow>(
    db: &Db,
    count: &str,
    rows: &str,
    args: &[Arg],
    paging: &Paging,
) -> CoreResult<(i64, Vec<R>)> {
    Ok(crate::with_db!(db, |pool| {
        let total: i64 = bind_args!(sqlx::query_scalar(count), args).fetch_one(pool).await?;
        let rows = bind_args!(sqlx::query_as(rows), args)
            .bind(paging.limit)
            .bind(paging.offset)
            .fetch_all(pool)
            .await?;
        Ok::<_, sqlx::Error>((total, rows))
    })?)
}

/// A page of a tenant's rows that one more text key narrows (a customer, a
/// user, an endpoint, a kind of object): [`page`] with the tenant as `$1` and
/// the key as `$2`, so `rows` ends in `limit $3 offset $4`.
pub async fn keyed_page<R: AnyRow>(
    db: &Db,
    count: &str,
    rows: &str,
    tenant_id: &TenantId,
    key: &str,
    paging: &Paging,
) -> CoreResult<(i64, Vec<R>)> {
    page(db, count, rows, &[Arg::from(tenant_id), Arg::from(key)], paging).await
}
