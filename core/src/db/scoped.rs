//! Reads of a tenant's table, written once: one row by id, and a page (of the
//! whole table, or of the rows one more key narrows: [`keyed_page`]).
//!
//! Every tenant-owned table has `tenant_id` and `id` columns. A [`TenantTable`]
//! names the table, the columns its row type reads and what a missing row is
//! called, and then reads a row of a tenant ([`TenantTable::get`], or
//! [`TenantTable::get_in`] inside a transaction: another tenant's row answers
//! `NotFound`, exactly as a missing one) or a page of them
//! ([`TenantTable::page`]: the count and the rows, in one order).

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
}

impl TenantTable {
    fn by_id(&self) -> String {
        format!(
            "select {} from {} where tenant_id = $1 and id = $2",
            self.columns, self.table
        )
    }

    /// The tenant's row `id`, or `NotFound`.
    pub async fn get<R: AnyRow>(&self, db: &Db, tenant_id: &TenantId, id: &str) -> CoreResult<R> {
        let sql = self.by_id();
        let row: Option<R> = crate::with_db!(db, |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.ok_or(CoreError::NotFound(self.what))
    }

    /// [`TenantTable::get`] inside `tx`.
    pub async fn get_in<R: AnyRow>(&self, tx: &mut Tx, tenant_id: &TenantId, id: &str) -> CoreResult<R> {
        let sql = self.by_id();
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
        let count = format!("select count(*) from {} where tenant_id = $1", self.table);
        let rows = format!(
            "select {} from {} where tenant_id = $1 order by {order} limit $2 offset $3",
            self.columns, self.table
        );
        Ok(crate::with_db!(db, |pool| {
            let total: i64 = sqlx::query_scalar(&count).bind(tenant_id).fetch_one(pool).await?;
            let rows = sqlx::query_as(&rows)
                .bind(tenant_id)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(pool)
                .await?;
            Ok::<_, sqlx::Error>((total, rows))
        })?)
    }
}

/// A page of a tenant's rows that one more text key narrows (a customer, a
/// user, an endpoint, a kind of object), with how many there are in all:
/// `count` counts them and `rows` reads the page. Both take the tenant as `$1`
/// and the key as `$2`; `rows` ends in `limit $3 offset $4`. For reads that
/// join other tables or narrow by more than the key, which
/// [`TenantTable::page`] cannot say.
pub async fn keyed_page<R: AnyRow>(
    db: &Db,
    count: &str,
    rows: &str,
    tenant_id: &TenantId,
    key: &str,
    paging: &Paging,
) -> CoreResult<(i64, Vec<R>)> {
    Ok(crate::with_db!(db, |pool| {
        let total: i64 = sqlx::query_scalar(count)
            .bind(tenant_id)
            .bind(key)
            .fetch_one(pool)
            .await?;
        let rows = sqlx::query_as(rows)
            .bind(tenant_id)
            .bind(key)
            .bind(paging.limit)
            .bind(paging.offset)
            .fetch_all(pool)
            .await?;
        Ok::<_, sqlx::Error>((total, rows))
    })?)
}
