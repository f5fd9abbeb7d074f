//! Distinct visitors per local day, counted as visits arrive.
//!
//! Unique visitors do not add up: a day's count is not the sum of its hours'. The
//! hourly rollups keep one row per visitor and hour, which is exact for any zone
//! but grows with the traffic. So each visit also marks its visitor seen on its
//! day in the tenant's time zone (`visitor_days`, once per visitor and day) and
//! counts that day's distinct visitors in a day rollup row (`VISITOR_DAY`). A daily report in that zone then reads one row per day.
//!
//! The counts follow the day rollups' rules (see [`super::days`]): kept in one
//! zone, complete from a known instant. Earlier days, other zones, hourly buckets
//! and filtered requests use the hourly rows.

use chrono_tz::Tz;

use super::{
    days::day_start,
    plan::Filter,
    sql::{bind_cond, Cond},
    window::Window,
};
use crate::{db::Tx, error::CoreResult, ids::TenantId, with_db, with_tx, Services};

/// The day-rollup kind of the per-day distinct counts.
const VISITOR_DAY: &str = "VISITOR_DAY";

/// Marks `visitor` seen on the local day of `at` in `zone`, counting them once per
/// day.
pub(crate) async fn mark_visitor_day(
    tx: &mut Tx,
    tenant_id: &TenantId,
    zone: Tz,
    visitor_id: &str,
    at: i64,
) -> CoreResult<()> {
    let day = day_start(zone, at);
    let first_today = with_tx!(tx, |conn| sqlx::query(
        "insert into visitor_days (tenant_id, zone, day_start, visitor_id) values ($1, $2, $3, $4) \
         on conflict (tenant_id, zone, day_start, visitor_id) do nothing"
    )
    .bind(tenant_id)
    .bind(zone.name())
    .bind(day)
    .bind(visitor_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    if first_today == 1 {
        with_tx!(tx, |conn| sqlx::query(
            "insert into report_day_rollups (tenant_id, zone, kind, group_kind, day, group_key, total, samples) \
             values ($1, $2, $3, '', $4, '', 0, 1) \
             on conflict (tenant_id, zone, kind, group_kind, day, group_key) do update \
             set samples = report_day_rollups.samples + 1"
        )
        .bind(tenant_id)
        .bind(zone.name())
        .bind(VISITOR_DAY)
        .bind(day)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    }
    Ok(())
}

impl Services {
    /// Distinct visitors per day bucket of `window` from the day counts, and the
    /// parts of the window they cannot answer (days before the counts were
    /// complete, the running day), or `None` when they answer none of it.
    pub(crate) async fn visitor_day_counts(
        &self,
        tenant_id: &TenantId,
        window: &Window,
    ) -> CoreResult<Option<(Vec<(i64, i64)>, Vec<Window>)>> {
        let Some((start, end)) = self.day_span(tenant_id, window).await? else {
            return Ok(None);
        };
        let rows: Vec<(i64, i64)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select day, samples from report_day_rollups where tenant_id = $1 and zone = $2 and kind = $3 \
             and group_kind = '' and group_key = '' and day >= $4 and day < $5"
        )
        .bind(tenant_id)
        .bind(window.tz.name())
        .bind(VISITOR_DAY)
        .bind(start)
        .bind(end)
        .fetch_all(pool)
        .await)?;
        let counts = rows.into_iter().map(|(day, n)| (window.bucket_of(day), n)).collect();
        let rest = [window.clip(window.start, start), window.clip(end, window.end)]
            .into_iter()
            .flatten()
            .collect();
        Ok(Some((counts, rest)))
    }

    /// Distinct visitors over the whole of `window`, counted by the database in
    /// one query (the visits index covers the visitor column). Unique visitors do
    /// not add up across buckets, so a period total cannot come from the day
    /// counts; reading every (hour, visitor) rollup row into the server was the
    /// slowest part of the visits dashboard.
    pub(crate) async fn distinct_visitors(
        &self,
        tenant_id: &TenantId,
        window: &Window,
        filter: &Filter,
    ) -> CoreResult<i64> {
        let mut cond = Cond::new();
        cond.visit_filters(4, filter);
        let sql = format!(
            "select count(distinct visitor_id) from visits \
             where tenant_id = $1 and started_at >= $2 and started_at < $3{}",
            cond.sql
        );
        let count: i64 = with_db!(self.db(), |pool| {
            let q = sqlx::query_scalar(&sql)
                .bind(tenant_id)
                .bind(window.start)
                .bind(window.end);
            bind_cond!(q, cond).fetch_one(pool).await
        })?;
        Ok(count)
    }
}
