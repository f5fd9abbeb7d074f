//! The script-error report (spec 2.16, second filter set): errors grouped by
//! message, file and line with their distinct visitors, and per bucket the
//! errors (`SCRIPT_ERRORS`) and the distinct visitors they hit
//! (`AFFECTED_VISITORS`).
//!
//! Distinct visitors do not add up, so a year's per-day counts would mean
//! counting a year of errors. Instead each stored error adds one to its local
//! day's `SCRIPT_ERROR` day row in the tenant's zone (`samples`: errors) and,
//! the first time its visitor errs that day (`error_visitor_days`), one to the
//! row's `total` (distinct visitors). An unfiltered daily report in that zone
//! reads one row per whole day; the rest of the period (the running day, days
//! before the rows were complete, other zones, filters) counts the errors
//! themselves. Both count the same, so they agree exactly. The rows follow the
//! day rollups' rules (see [`super::days`]), and start at `errors_from` for
//! tenants that existed before them (migration 0013).

use std::collections::{BTreeMap, HashMap};

use chrono_tz::Tz;

use super::{
    api::{ScriptErrorFilter, ScriptErrorReport, ScriptErrorRow},
    days::day_start,
    query::Strategy,
    resources::{check_ids, criteria, labelled, number, text, Column, MAX_ROWS},
    sql::{bind_cond, Cond},
    window::Window,
};
use crate::{
    db::{Db, Tx},
    error::CoreResult,
    ids::TenantId,
    time::from_ms,
    validate::Checks,
    with_db, with_tx, Services,
};

/// The day-rollup kind of the per-day error counts.
const SCRIPT_ERROR: &str = "SCRIPT_ERROR";

const ERROR_COLUMNS: &[Column] = &[
    text("message", "message"),
    text("fileName", "file_name"),
    number("line", "line"),
    text("url", "url"),
    text("path", "path"),
    text("sessionId", "session_id"),
    text("visitId", "visit_id"),
    text("visitorId", "visitor_id"),
    text("externalId", "external_id"),
];

/// The fields a script-error report's `criteria.key` names.
pub fn criteria_keys() -> Vec<&'static str> {
    super::resources::keys(ERROR_COLUMNS)
}

type ErrorRowSql = (String, Option<String>, Option<i32>, i64, i64, i64, i64, Option<String>);

/// Counts a stored error on its local day in `zone`: one more error, and one
/// more affected visitor the first time `visitor_id` errs that day.
pub(crate) async fn mark_error_day(
    tx: &mut Tx,
    tenant_id: &TenantId,
    zone: Tz,
    visitor_id: Option<&str>,
    at: i64,
) -> CoreResult<()> {
    let day = day_start(zone, at);
    let first_today = match visitor_id.filter(|v| !v.is_empty()) {
        Some(visitor) => with_tx!(tx, |conn| sqlx::query(
            "insert into error_visitor_days (tenant_id, zone, day_start, visitor_id) values ($1, $2, $3, $4) \
             on conflict (tenant_id, zone, day_start, visitor_id) do nothing"
        )
        .bind(tenant_id)
        .bind(zone.name())
        .bind(day)
        .bind(visitor)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?,
        None => 0,
    };
    with_tx!(tx, |conn| sqlx::query(
        "insert into report_day_rollups (tenant_id, zone, kind, group_kind, day, group_key, total, samples) \
         values ($1, $2, $3, '', $4, '', $5, 1) \
         on conflict (tenant_id, zone, kind, group_kind, day, group_key) do update \
         set total = report_day_rollups.total + excluded.total, samples = report_day_rollups.samples + 1"
    )
    .bind(tenant_id)
    .bind(zone.name())
    .bind(SCRIPT_ERROR)
    .bind(day)
    .bind(first_today as i64)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

impl Services {
    /// The script-error report (spec 2.16, second filter set). `strategy` is
    /// [`Strategy::Rollups`] except in tests and the benchmark.
    pub async fn script_error_report(
        &self,
        tenant_id: &TenantId,
        filter: &ScriptErrorFilter,
        strategy: Strategy,
    ) -> CoreResult<ScriptErrorReport> {
        let window = self
            .report_window(tenant_id, &filter.date_filter, &[], "dateFilter.")
            .await?;
        let mut checks = Checks::new();
        check_ids(&mut checks, "visitorIds", &filter.visitor_ids);
        check_ids(&mut checks, "externalIds", &filter.external_ids);
        let mut cond = Cond::new();
        let next = 4;
        cond.equals(next, "session_id", filter.session_id.as_deref());
        cond.any_of(next, "visitor_id", filter.visitor_ids.as_deref().unwrap_or_default());
        cond.any_of(next, "external_id", filter.external_ids.as_deref().unwrap_or_default());
        cond.equals(next, "path", filter.path.as_deref());
        cond.prefix(next, "url", filter.url.as_deref());
        cond.equals(next, "file_name", filter.file_name.as_deref());
        if let Some(tags) = &filter.tags {
            cond.tags(next, "tags", tags);
        }
        if let Some(c) = &filter.criteria {
            criteria(&mut checks, &mut cond, next, ERROR_COLUMNS, c);
        }
        checks.finish()?;

        let at = if self.scan_by_signature(tenant_id, &window).await? {
            "+at"
        } else {
            "at"
        };
        let sql = format!(
            "select message, file_name, line, count(*), count(distinct visitor_id), min(at), max(at), max(stack) \
             from script_errors where tenant_id = $1 and {at} >= $2 and {at} < $3{} \
             group by 1, 2, 3 order by 4 desc, 1 limit {MAX_ROWS}",
            cond.sql
        );
        let rows: Vec<ErrorRowSql> = with_db!(self.db(), |pool| {
            let q = sqlx::query_as(&sql).bind(tenant_id).bind(window.start).bind(window.end);
            bind_cond!(q, cond).fetch_all(pool).await
        })?;
        let errors = rows
            .into_iter()
            .map(
                |(message, file_name, line, count, visitors, first, last, stack)| ScriptErrorRow {
                    message,
                    file_name,
                    line,
                    count,
                    visitors,
                    first_seen: from_ms(first),
                    last_seen: from_ms(last),
                    stack,
                },
            )
            .collect();
        let per_bucket = self.errors_per_bucket(tenant_id, &window, &cond, strategy).await?;
        let results = labelled(&window, |b| {
            let (errors, visitors) = per_bucket.get(&b).copied().unwrap_or_default();
            BTreeMap::from([
                ("SCRIPT_ERRORS".to_string(), errors.to_string()),
                ("AFFECTED_VISITORS".to_string(), visitors.to_string()),
            ])
        });
        Ok(ScriptErrorReport { errors, results })
    }

    /// Whether the error list should read the tenant's errors in signature
    /// order rather than the period's in time order (SQLite only).
    ///
    /// SQLite is built without STAT4 (see `.cargo/config.toml`), so its
    /// planner cannot tell how much of a tenant's history a time range holds,
    /// and always reads the range and sorts it by signature. For a period that
    /// is most of the history, reading every error already in signature order
    /// (`script_errors_signature_idx`) and skipping those outside the period
    /// does no sort: measured on 90 days of errors, a year's list took 17 ms
    /// instead of 59, a week's 7 ms instead of 3. So the signature order is
    /// chosen when the period spans more than a quarter of the time since the
    /// tenant's first error; a unary `+` on `at` keeps SQLite off the time range.
    async fn scan_by_signature(&self, tenant_id: &TenantId, window: &Window) -> CoreResult<bool> {
        let Db::Sqlite(crate::db::SqlitePools { reads: pool, .. }) = self.db() else {
            return Ok(false);
        };
        let first: Option<i64> = sqlx::query_scalar("select min(at) from script_errors where tenant_id = $1")
            .bind(tenant_id)
            .fetch_one(pool)
            .await?;
        let Some(first) = first else {
            return Ok(false);
        };
        let history = (window.end - first).max(1);
        let covered = window.end - window.start.max(first);
        Ok(covered * 4 > history)
    }

    /// Errors and distinct visitors per bucket: whole local days from the day
    /// rows where they apply, the rest counted from the errors.
    async fn errors_per_bucket(
        &self,
        tenant_id: &TenantId,
        window: &Window,
        cond: &Cond,
        strategy: Strategy,
    ) -> CoreResult<HashMap<i64, (i64, i64)>> {
        let mut per_bucket = HashMap::new();
        let mut rest = vec![window.clone()];
        let days = if strategy == Strategy::Rollups && cond.sql.is_empty() {
            self.error_day_span(tenant_id, window).await?
        } else {
            None
        };
        if let Some((start, end)) = days {
            let rows: Vec<(i64, i64, i64)> = with_db!(self.db(), |pool| sqlx::query_as(
                "select day, total, samples from report_day_rollups where tenant_id = $1 and zone = $2 \
                 and kind = $3 and group_kind = '' and group_key = '' and day >= $4 and day < $5"
            )
            .bind(tenant_id)
            .bind(window.tz.name())
            .bind(SCRIPT_ERROR)
            .bind(start)
            .bind(end)
            .fetch_all(pool)
            .await)?;
            for (day, visitors, errors) in rows {
                per_bucket.insert(window.bucket_of(day), (errors, visitors));
            }
            rest = [window.clip(window.start, start), window.clip(end, window.end)]
                .into_iter()
                .flatten()
                .collect();
        }
        // One query per part: a visitor on both sides of a DST change within one
        // bucket counts once. The parts share no bucket (they are cut at local
        // midnights and the buckets are days).
        for part in rest {
            let sql = format!(
                "select {}, count(*), count(distinct nullif(visitor_id, '')) from script_errors \
                 where tenant_id = $1 and at >= $2 and at < $3{} group by 1",
                part.bucket_sql("at"),
                cond.sql
            );
            let rows: Vec<(i64, i64, i64)> = with_db!(self.db(), |pool| {
                let q = sqlx::query_as(&sql).bind(tenant_id).bind(part.start).bind(part.end);
                bind_cond!(q, cond).fetch_all(pool).await
            })?;
            per_bucket.extend(rows.into_iter().map(|(b, n, v)| (b, (n, v))));
        }
        Ok(per_bucket)
    }
}
