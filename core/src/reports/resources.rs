//! The conversation-resource report (spec 2.16), and the search helpers it shares
//! with the script-error report ([`super::errors`]).
//!
//! Both reports are searches: any combination of filters, including a free `criteria` on
//! any field, over the raw rows of the period (indexed by tenant and time). Rows
//! are averaged per resource name (and group); totals per bucket feed charts.
//!
//! Resource loads are the bulk of what visitors report, so the resource report
//! also reads rollups (per name, type and status code) when the request filters
//! and groups only by those: daily ones in the tenant's zone for whole local days
//! (`resource_day_rollups`, see [`super::days`]), hourly ones for whole hours
//! when the period's offsets are whole hours (`resource_rollups`), and raw rows
//! for the rest. All paths add up the same sums, so they agree exactly.

use std::collections::{BTreeMap, HashMap};

use super::{
    api::{Criteria, ResourceFilter, ResourceGroupBy, ResourceReport, ResourceRow},
    query::Strategy,
    sql::{bind_cond, Bind, Cond},
    window::Window,
};
use crate::{error::CoreResult, ids::TenantId, validate::Checks, with_db, Services};

/// Most rows in a report.
pub(super) const MAX_ROWS: i64 = 1000;

/// A column a `criteria.key` can name.
pub(super) struct Column {
    key: &'static str,
    sql: &'static str,
    numeric: bool,
}

pub(super) const fn text(key: &'static str, sql: &'static str) -> Column {
    Column {
        key,
        sql,
        numeric: false,
    }
}

pub(super) const fn number(key: &'static str, sql: &'static str) -> Column {
    Column {
        key,
        sql,
        numeric: true,
    }
}

const RESOURCE_COLUMNS: &[Column] = &[
    text("name", "name"),
    text("type", "type"),
    text("url", "url"),
    text("path", "path"),
    number("statusCode", "status_code"),
    number("durationMs", "duration_ms"),
    number("transferBytes", "transfer_bytes"),
    text("sessionId", "session_id"),
    text("visitId", "visit_id"),
    text("visitorId", "visitor_id"),
    text("externalId", "external_id"),
];

/// The fields a resource report's `criteria.key` names.
pub fn criteria_keys() -> Vec<&'static str> {
    keys(RESOURCE_COLUMNS)
}

/// The `criteria.key`s of a report's columns.
pub(super) fn keys(columns: &[Column]) -> Vec<&'static str> {
    columns.iter().map(|c| c.key).collect()
}

/// The conditions a `criteria.criteriaObject` takes.
pub const CRITERIA_CONDITIONS: [&str; 8] = ["empty", "eq", "ne", "gt", "gte", "lt", "lte", "contains"];

/// Turns a `criteria` into SQL, or names what is wrong with it.
pub(super) fn criteria(checks: &mut Checks, cond: &mut Cond, next: usize, columns: &[Column], criteria: &Criteria) {
    let Some(column) = columns.iter().find(|c| c.key == criteria.key) else {
        let keys: Vec<&str> = columns.iter().map(|c| c.key).collect();
        checks.push(
            "criteria.key",
            "unknown_field",
            format!("criteria.key must be one of {}", keys.join(", ")),
        );
        return;
    };
    let col = column.sql;
    for (op, value) in &criteria.criteria_object {
        let field = format!("criteria.criteriaObject.{op}");
        let p = next + cond.binds.len();
        match (op.as_str(), value) {
            ("empty", serde_json::Value::Bool(empty)) => {
                let missing = if column.numeric {
                    format!("{col} is null")
                } else {
                    format!("({col} is null or {col} = '')")
                };
                cond.sql += &if *empty {
                    format!(" and {missing}")
                } else {
                    format!(" and not {missing}")
                };
            }
            ("eq" | "ne" | "gt" | "gte" | "lt" | "lte", value) => {
                let sql_op = match op.as_str() {
                    "eq" => "=",
                    "ne" => "<>",
                    "gt" => ">",
                    "gte" => ">=",
                    "lt" => "<",
                    _ => "<=",
                };
                let bind = match (column.numeric, value) {
                    (true, serde_json::Value::Number(n)) if n.as_i64().is_some() => Bind::Int(n.as_i64().unwrap_or(0)),
                    (false, serde_json::Value::String(s)) => Bind::Text(s.clone()),
                    _ => {
                        let want = if column.numeric { "an integer" } else { "a string" };
                        checks.push(&field, "invalid_type", format!("{} compares with {want}", criteria.key));
                        continue;
                    }
                };
                cond.sql += &format!(" and {col} {sql_op} ${p}");
                cond.binds.push(bind);
            }
            ("contains", serde_json::Value::String(s)) if !column.numeric => {
                let escaped = s.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
                cond.sql += &format!(" and {col} like ${p} escape '\\'");
                cond.binds.push(Bind::Text(format!("%{escaped}%")));
            }
            _ => checks.push(
                &field,
                "unsupported_condition",
                "use empty (boolean), eq, ne, gt, gte, lt, lte or contains (strings)",
            ),
        }
    }
}

pub(super) fn check_ids(checks: &mut Checks, field: &str, ids: &Option<Vec<String>>) {
    if let Some(ids) = ids {
        checks.unique_items(field, ids, 200, |checks, at, v| {
            checks.required_text(at, Some(v), 200);
        });
    }
}

fn group_column(group_by: ResourceGroupBy) -> &'static str {
    match group_by {
        ResourceGroupBy::ResourceName => "name",
        ResourceGroupBy::SessionId => "session_id",
        ResourceGroupBy::VisitId => "visit_id",
        ResourceGroupBy::VisitorId => "visitor_id",
        ResourceGroupBy::ExternalId => "external_id",
        ResourceGroupBy::Type => "type",
        ResourceGroupBy::Path => "path",
        ResourceGroupBy::Url => "url",
        ResourceGroupBy::StatusCode => "cast(status_code as text)",
    }
}

/// A resource row's sums, before averaging: loads, duration sum and max, transfer
/// sum and samples, errors.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct LoadSums {
    loads: i64,
    duration_sum: i64,
    duration_max: i64,
    transfer_sum: i64,
    transfer_samples: i64,
    errors: i64,
}

impl LoadSums {
    fn add(&mut self, other: LoadSums) {
        self.loads += other.loads;
        self.duration_sum += other.duration_sum;
        self.duration_max = self.duration_max.max(other.duration_max);
        self.transfer_sum += other.transfer_sum;
        self.transfer_samples += other.transfer_samples;
        self.errors += other.errors;
    }
}

/// `(group, name, type)` → sums.
type LoadGrid = HashMap<(Option<String>, String, String), LoadSums>;
type LoadRowSql = (Option<String>, String, String, i64, i64, i64, i64, i64, i64);

/// The sums of one resource row, as SQL over raw loads or hourly rollups.
const RAW_SUMS: &str = "count(*), cast(sum(duration_ms) as bigint), max(duration_ms), \
     cast(coalesce(sum(transfer_bytes), 0) as bigint), count(transfer_bytes), \
     cast(sum(case when status_code >= 400 then 1 else 0 end) as bigint)";
const ROLLUP_SUMS: &str = "cast(sum(loads) as bigint), cast(sum(duration_sum) as bigint), max(duration_max), \
     cast(sum(transfer_sum) as bigint), cast(sum(transfer_samples) as bigint), cast(sum(errors) as bigint)";

/// Where a part of a resource report's period is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoadSource {
    /// `resource_day_rollups`: whole local days.
    Days,
    /// `resource_rollups`: whole UTC hours.
    Hours,
    /// `visit_resources`: the loads themselves.
    Raw,
}

/// Per-bucket totals (loads, duration sum, errors) over rollup rows and over loads.
const ROLLUP_TOTALS: &str =
    "cast(sum(loads) as bigint), cast(sum(duration_sum) as bigint), cast(sum(errors) as bigint)";
const RAW_TOTALS: &str = "count(*), cast(sum(duration_ms) as bigint), \
     cast(sum(case when status_code >= 400 then 1 else 0 end) as bigint)";

/// Whether the resource rollups can answer this filter: only the
/// dimensions they keep are filtered on or grouped by.
fn rollups_answer(filter: &ResourceFilter) -> bool {
    let ids_empty = |ids: &Option<Vec<String>>| ids.as_ref().is_none_or(Vec::is_empty);
    filter.session_id.is_none()
        && filter.visit_id.is_none()
        && ids_empty(&filter.visitor_ids)
        && ids_empty(&filter.external_ids)
        && filter.path.is_none()
        && filter.url.is_none()
        && filter.tags.is_none()
        && filter.criteria.is_none()
        && matches!(
            filter.group_by,
            None | Some(ResourceGroupBy::ResourceName | ResourceGroupBy::Type | ResourceGroupBy::StatusCode)
        )
}

impl Services {
    /// The parts of `window` and where each is read from: whole local days from
    /// day rollups, whole hours from hourly rollups, the rest from raw loads.
    async fn resource_sources(
        &self,
        tenant_id: &TenantId,
        window: &Window,
        filter: &ResourceFilter,
        strategy: Strategy,
    ) -> CoreResult<Vec<(LoadSource, i64, i64)>> {
        if strategy == Strategy::Raw || !rollups_answer(filter) {
            return Ok(vec![(LoadSource::Raw, window.start, window.end)]);
        }
        let mut parts = Vec::new();
        let mut rest = vec![window.clone()];
        if let Some((start, end)) = self.day_span(tenant_id, window).await? {
            parts.push((LoadSource::Days, start, end));
            rest = [window.clip(window.start, start), window.clip(end, window.end)]
                .into_iter()
                .flatten()
                .collect();
        }
        for part in rest {
            let (hours_start, hours_end) = part.whole_hours();
            if part.hour_aligned() && hours_start < hours_end {
                parts.push((LoadSource::Hours, hours_start, hours_end));
                parts.push((LoadSource::Raw, part.start, hours_start));
                parts.push((LoadSource::Raw, hours_end, part.end));
            } else {
                parts.push((LoadSource::Raw, part.start, part.end));
            }
        }
        parts.retain(|(_, start, end)| start < end);
        Ok(parts)
    }

    /// The conversation-resource report (spec 2.16, first filter set). `strategy`
    /// is [`Strategy::Rollups`] except in tests and the benchmark.
    pub async fn resource_report(
        &self,
        tenant_id: &TenantId,
        filter: &ResourceFilter,
        strategy: Strategy,
    ) -> CoreResult<ResourceReport> {
        let window = self
            .report_window(tenant_id, &filter.date_filter, &[], "dateFilter.")
            .await?;
        let mut checks = Checks::new();
        check_ids(&mut checks, "visitorIds", &filter.visitor_ids);
        check_ids(&mut checks, "externalIds", &filter.external_ids);
        let mut cond = Cond::new();
        let next = 4;
        cond.equals(next, "name", filter.resource_name.as_deref());
        cond.equals(next, "session_id", filter.session_id.as_deref());
        cond.equals(next, "visit_id", filter.visit_id.as_deref());
        cond.any_of(next, "visitor_id", filter.visitor_ids.as_deref().unwrap_or_default());
        cond.any_of(next, "external_id", filter.external_ids.as_deref().unwrap_or_default());
        if let Some(code) = filter.status_code {
            cond.sql += &format!(" and status_code = ${}", next + cond.binds.len());
            cond.binds.push(Bind::Int(code.into()));
        }
        cond.equals(next, "type", filter.kind.as_deref());
        cond.equals(next, "path", filter.path.as_deref());
        cond.prefix(next, "url", filter.url.as_deref());
        if let Some(tags) = &filter.tags {
            cond.tags(next, "tags", tags);
        }
        if let Some(c) = &filter.criteria {
            criteria(&mut checks, &mut cond, next, RESOURCE_COLUMNS, c);
        }
        checks.finish()?;

        let group = filter.group_by.map(group_column).unwrap_or("null");
        // The rollups keep unknown status codes as -1.
        let rollup_group = match filter.group_by {
            Some(ResourceGroupBy::StatusCode) => {
                "case when status_code < 0 then null else cast(status_code as text) end"
            }
            _ => group,
        };
        let mut loads = LoadGrid::new();
        let mut totals = HashMap::new();
        for (source, start, end) in self.resource_sources(tenant_id, &window, filter, strategy).await? {
            let (table, at, group, sums, totals_sql) = match source {
                LoadSource::Days => ("resource_day_rollups", "day", rollup_group, ROLLUP_SUMS, ROLLUP_TOTALS),
                LoadSource::Hours => ("resource_rollups", "hour", rollup_group, ROLLUP_SUMS, ROLLUP_TOTALS),
                LoadSource::Raw => ("visit_resources", "at", group, RAW_SUMS, RAW_TOTALS),
            };
            // Day rows are kept in the zone `day_span` checked against the window's.
            let zone = if source == LoadSource::Days {
                " and zone = (select zone from day_rollup_zones where tenant_id = $1)"
            } else {
                ""
            };
            // A whole period from raw rows is cut to the report's size in SQL; raw
            // edges beside rollups are small and merged whole.
            let limit = if source == LoadSource::Raw && (start, end) == (window.start, window.end) {
                format!(" order by 4 desc, 2 limit {MAX_ROWS}")
            } else {
                String::new()
            };
            let sql = format!(
                "select {group}, name, type, {sums} from {table} \
                 where tenant_id = $1 and {at} >= $2 and {at} < $3{zone}{} group by 1, 2, 3{limit}",
                cond.sql
            );
            self.load_rows(&sql, tenant_id, start, end, &cond, &mut loads).await?;
            let filter_sql = format!("{zone}{}", cond.sql);
            if let Some(part) = window.clip(start, end) {
                self.bucket_totals(
                    tenant_id,
                    &part,
                    (table, at),
                    totals_sql,
                    (&filter_sql, &cond),
                    &mut totals,
                )
                .await?;
            }
        }

        let mut rows: Vec<ResourceRow> = loads
            .into_iter()
            .map(|((group, name, kind), sums)| ResourceRow {
                group,
                resource_name: name,
                kind,
                count: sums.loads,
                avg_duration_ms: round2(sums.duration_sum as f64 / sums.loads.max(1) as f64),
                max_duration_ms: sums.duration_max,
                avg_transfer_bytes: (sums.transfer_samples > 0)
                    .then(|| (sums.transfer_sum as f64 / sums.transfer_samples as f64).round()),
                error_count: sums.errors,
            })
            .collect();
        rows.sort_by(|a, b| {
            (b.count, &a.resource_name, &a.kind, &a.group).cmp(&(a.count, &b.resource_name, &b.kind, &b.group))
        });
        rows.truncate(MAX_ROWS as usize);
        let results = labelled(&window, |b| {
            let (count, sum, errors) = totals.get(&b).copied().unwrap_or_default();
            let mut cells = BTreeMap::from([
                ("RESOURCE_LOADS".to_string(), count.to_string()),
                ("RESOURCE_ERRORS".to_string(), errors.to_string()),
            ]);
            if count > 0 {
                cells.insert(
                    "AVG_RESOURCE_DURATION".into(),
                    round2(sum as f64 / count as f64).to_string(),
                );
            }
            cells
        });
        Ok(ResourceReport { rows, results })
    }

    /// Adds the rows of a resource query (`$1` tenant, `$2`–`$3` period, then
    /// `cond`) to `loads`.
    async fn load_rows(
        &self,
        sql: &str,
        tenant_id: &TenantId,
        start: i64,
        end: i64,
        cond: &Cond,
        loads: &mut LoadGrid,
    ) -> CoreResult<()> {
        let rows: Vec<LoadRowSql> = with_db!(self.db(), |pool| {
            let q = sqlx::query_as(sql).bind(tenant_id).bind(start).bind(end);
            bind_cond!(q, cond).fetch_all(pool).await
        })?;
        for (group, name, kind, loads_n, duration_sum, duration_max, transfer_sum, transfer_samples, errors) in rows {
            loads.entry((group, name, kind)).or_default().add(LoadSums {
                loads: loads_n,
                duration_sum,
                duration_max,
                transfer_sum,
                transfer_samples,
                errors,
            });
        }
        Ok(())
    }

    /// Adds, per bucket, a count and two sums (`sums`, three SQL expressions) of
    /// `table` rows whose `at` column falls in `part` and match `filter_sql`
    /// (with `cond`'s placeholders, from `$4`), in one query over the range's
    /// segments.
    async fn bucket_totals(
        &self,
        tenant_id: &TenantId,
        part: &Window,
        (table, at): (&str, &str),
        sums: &str,
        (filter_sql, cond): (&str, &Cond),
        out: &mut HashMap<i64, (i64, i64, i64)>,
    ) -> CoreResult<()> {
        let sql = format!(
            "select {}, {sums} from {table} where tenant_id = $1 and {at} >= $2 and {at} < $3{filter_sql} group by 1",
            part.bucket_sql(at),
        );
        let rows: Vec<(i64, i64, Option<i64>, Option<i64>)> = with_db!(self.db(), |pool| {
            let q = sqlx::query_as(&sql).bind(tenant_id).bind(part.start).bind(part.end);
            bind_cond!(q, cond).fetch_all(pool).await
        })?;
        for (b, count, x, y) in rows {
            let cell = out.entry(b).or_default();
            cell.0 += count;
            cell.1 += x.unwrap_or(0);
            cell.2 += y.unwrap_or(0);
        }
        Ok(())
    }
}

/// Rounds to two decimal places.
fn round2(value: f64) -> f64 {
    (value * 100.0).round() / 100.0
}

/// One entry per bucket of the window, labelled.
pub(super) fn labelled(
    window: &Window,
    cells: impl Fn(i64) -> BTreeMap<String, String>,
) -> BTreeMap<String, BTreeMap<String, String>> {
    window
        .buckets()
        .into_iter()
        .map(|b| (window.label(b), cells(b)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn criteria_are_checked() {
        let mut checks = Checks::new();
        let mut cond = Cond::new();
        let c: Criteria = serde_json::from_value(serde_json::json!({
            "key": "durationMs", "criteriaObject": {"gte": 1000, "contains": "x", "lt": "slow"}
        }))
        .unwrap();
        criteria(&mut checks, &mut cond, 4, RESOURCE_COLUMNS, &c);
        let CoreError::Validation(errors) = checks.finish().unwrap_err() else {
            panic!()
        };
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"criteria.criteriaObject.contains"));
        assert!(fields.contains(&"criteria.criteriaObject.lt"));
        assert_eq!(cond.sql, " and duration_ms >= $4");
    }
}
