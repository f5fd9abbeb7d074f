//! Answering report requests.
//!
//! A metric is computed per *source* (see [`Source`]) as a grid of
//! `(bucket, group key) → (total, samples)`, then combined by its [`Measure`].
//! Each grid comes from one of two paths that must agree:
//! - **rollups**: hourly sums, bucketed per constant-offset segment with
//!   `(hour + offset) / bucket_len` in SQL. Cost grows with the hours in the
//!   period, never with the facts. Used when every offset of the period is a whole
//!   number of hours, the buckets are hours or days, and the filters are ones the
//!   rollups keep (agent, second dimension, rule ids). The partial hours at the
//!   period's edges, and presence intervals still open, come from raw facts.
//! - **raw**: the same `GROUP BY` over the fact tables. Exact for any zone and any
//!   filter; the benchmark's baseline and the tests' reference.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{
    api::{AggregationResponse, DateFilter, MetricEntry, ReportRequest, TagsFilter},
    catalogue::{self, Filters, Measure, MetricDef, Report, Source, Unit},
    window::{parse_zone, Window, WindowSpec},
};
use crate::{db::placeholders, error::CoreResult, time::now_ms, validate::Checks, with_db, Services};

const HOUR: i64 = 3_600_000;
/// Most metrics in one request.
const MAX_METRICS: usize = 20;

/// Which path answers: the fast one, or raw facts only (tests, benchmark baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Rollups where they apply.
    Rollups,
    /// Raw facts only.
    Raw,
}

/// `(bucket, group key) → (total, samples)`.
type Grid = HashMap<(i64, String), (i64, i64)>;

/// A metric entry after validation.
#[derive(Debug, Clone)]
struct Query {
    def: &'static MetricDef,
    /// Rollup group kind: `""` (total), `AGENT`, `DIM`.
    group_kind: &'static str,
    filter: Filter,
}

/// The filters of a metric entry that the engine applies.
#[derive(Debug, Clone, Default)]
pub(crate) struct Filter {
    pub tags: TagsFilter,
    pub visitor_ids: Vec<String>,
    pub external_ids: Vec<String>,
    pub base_url: Option<String>,
    pub rule_ids: Vec<String>,
}

impl Filter {
    /// Whether rollups hold what this filter needs (rule ids are the DIM key).
    fn rollup_compatible(&self) -> bool {
        self.tags.is_empty() && self.visitor_ids.is_empty() && self.external_ids.is_empty() && self.base_url.is_none()
    }
}

/// A value bound to a [`Cond`] placeholder.
#[derive(Debug, Clone)]
pub(crate) enum Bind {
    Text(String),
    Int(i64),
}

/// A SQL condition with its bound values, numbered from a given placeholder.
pub(crate) struct Cond {
    pub sql: String,
    pub binds: Vec<Bind>,
}

/// Binds a [`Cond`]'s values to a query, on either backend.
macro_rules! bind_cond {
    ($q:expr, $cond:expr) => {{
        let mut q = $q;
        for v in &$cond.binds {
            q = match v {
                $crate::reports::query::Bind::Text(s) => q.bind(s.clone()),
                $crate::reports::query::Bind::Int(i) => q.bind(*i),
            };
        }
        q
    }};
}
pub(crate) use bind_cond;

impl Cond {
    pub fn new() -> Self {
        Cond {
            sql: String::new(),
            binds: Vec::new(),
        }
    }

    /// Adds `column in (…)`; nothing for an empty list.
    pub fn any_of(&mut self, next: usize, column: &str, values: &[String]) {
        if values.is_empty() {
            return;
        }
        let first = next + self.binds.len();
        self.sql += &format!(" and {column} in ({})", placeholders(first, values.len()));
        self.binds.extend(values.iter().cloned().map(Bind::Text));
    }

    /// Adds `column = $n`.
    pub fn equals(&mut self, next: usize, column: &str, value: Option<&str>) {
        if let Some(value) = value {
            self.sql += &format!(" and {column} = ${}", next + self.binds.len());
            self.binds.push(Bind::Text(value.to_string()));
        }
    }

    /// Adds "column starts with value".
    pub fn prefix(&mut self, next: usize, column: &str, value: Option<&str>) {
        if let Some(value) = value {
            let p = next + self.binds.len();
            self.sql += &format!(" and substr({column}, 1, length(${p})) = ${p}");
            self.binds.push(Bind::Text(value.to_string()));
        }
    }

    /// Adds the tags filter on a `|a|b|` column.
    pub fn tags(&mut self, next: usize, column: &str, tags: &TagsFilter) {
        let like = |t: &str| {
            let escaped = t.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
            format!("%|{escaped}|%")
        };
        for tag in &tags.all {
            self.sql += &format!(" and {column} like ${} escape '\\'", next + self.binds.len());
            self.binds.push(Bind::Text(like(tag)));
        }
        for tag in &tags.none {
            self.sql += &format!(
                " and ({column} is null or {column} not like ${} escape '\\')",
                next + self.binds.len()
            );
            self.binds.push(Bind::Text(like(tag)));
        }
        if !tags.any.is_empty() {
            let parts: Vec<String> = tags
                .any
                .iter()
                .map(|tag| {
                    let p = next + self.binds.len();
                    self.binds.push(Bind::Text(like(tag)));
                    format!("{column} like ${p} escape '\\'")
                })
                .collect();
            self.sql += &format!(" and ({})", parts.join(" or "));
        }
    }
}

/// Checks a metric entry's filters against what its report takes.
fn check_filters(checks: &mut Checks, field: &str, report: Report, entry: &MetricEntry) -> Filter {
    let allowed = report.filters();
    let refuse = |checks: &mut Checks, name: &str| {
        checks.push(
            &format!("{field}.{name}"),
            "unsupported_filter",
            format!("the {} report does not take {name}", report.path()),
        )
    };
    let mut filter = Filter::default();
    if let Some(tags) = &entry.tags {
        if matches!(allowed, Filters::Tags | Filters::Visit) {
            filter.tags = tags.clone();
        } else {
            refuse(checks, "tags");
        }
    }
    for (name, value, target) in [
        ("visitorIds", &entry.visitor_ids, &mut filter.visitor_ids),
        ("externalIds", &entry.external_ids, &mut filter.external_ids),
        ("ruleIds", &entry.rule_ids, &mut filter.rule_ids),
    ] {
        let Some(values) = value else { continue };
        let ok = if name == "ruleIds" {
            allowed == Filters::Rules
        } else {
            allowed == Filters::Visit
        };
        if !ok {
            refuse(checks, name);
            continue;
        }
        let path = format!("{field}.{name}");
        checks.unique_items(&path, values, 200, |checks, at, v| {
            checks.required_text(at, Some(v), 200);
        });
        *target = values.clone();
    }
    if let Some(base) = &entry.base_url {
        if allowed == Filters::Visit {
            checks.http_url(&format!("{field}.baseUrl"), base);
            filter.base_url = Some(base.clone());
        } else {
            refuse(checks, "baseUrl");
        }
    }
    filter
}

/// Validates a request against a report's catalogue.
fn plan(report: Report, request: &ReportRequest) -> CoreResult<Vec<Query>> {
    let mut checks = Checks::new();
    if request.metrics.is_empty() {
        checks.push("metrics", "required", "name at least one metric");
    }
    if request.metrics.len() > MAX_METRICS {
        checks.push("metrics", "too_many", format!("at most {MAX_METRICS} metrics"));
    }
    let grouped = request.metrics.iter().any(|m| m.group_by.is_some());
    if grouped && request.metrics.len() > 1 {
        checks.push(
            "metrics",
            "group_by_single_metric",
            "with a groupBy, a request carries exactly one metric",
        );
    }
    let mut queries = Vec::new();
    for (i, entry) in request.metrics.iter().enumerate() {
        let field = format!("metrics[{i}]");
        let Some(def) = catalogue::find(report, &entry.metric_name) else {
            checks.push(
                &format!("{field}.metricName"),
                "unknown_metric",
                format!(
                    "{:?} is not a metric of the {} report (see GET /rest/v1/report/metrics)",
                    entry.metric_name,
                    report.path()
                ),
            );
            continue;
        };
        let group_by = entry.group_by.as_deref().or(report.default_group_by());
        let group_kind = match group_by {
            None => "",
            Some(name) => match def.group_by.iter().find(|g| g.name == name) {
                Some(g) => g.group_kind,
                None => {
                    let offered: Vec<&str> = def.group_by.iter().map(|g| g.name).collect();
                    checks.push(
                        &format!("{field}.groupBy"),
                        "invalid_group_by",
                        format!("{} takes groupBy {}", def.name, offered.join(", ")),
                    );
                    ""
                }
            },
        };
        let filter = check_filters(&mut checks, &field, report, entry);
        queries.push(Query {
            def,
            group_kind,
            filter,
        });
    }
    checks.finish()?;
    Ok(queries)
}

/// Decimal with up to two places, trailing zeros dropped.
fn decimal(value: f64) -> String {
    let s = format!("{value:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// The value of one cell, or `None` when it is undefined (an average or rate with
/// no samples).
fn cell(def: &MetricDef, parts: &[Grid], key: &(i64, String)) -> Option<String> {
    let sum = |grids: &[Grid]| {
        grids.iter().fold((0i64, 0i64), |(t, s), g| {
            let (gt, gs) = g.get(key).copied().unwrap_or_default();
            (t + gt, s + gs)
        })
    };
    match def.measure {
        Measure::Sum(_) => {
            let (total, _) = sum(parts);
            Some(match def.unit {
                Unit::Seconds => ((total + 500).div_euclid(1000)).to_string(),
                Unit::Minutes => decimal(total as f64 / 60_000.0),
                _ => total.to_string(),
            })
        }
        Measure::Count(_) | Measure::DistinctVisitors => Some(sum(parts).1.to_string()),
        Measure::Average(_) => {
            let (total, samples) = sum(parts);
            (samples > 0).then(|| decimal(total as f64 / samples as f64 / 1000.0))
        }
        Measure::HitRate { matched, .. } => {
            let (_, hits) = sum(&parts[..matched.len()]);
            let (_, misses) = sum(&parts[matched.len()..]);
            (hits > 0).then(|| decimal(100.0 * (hits - misses).max(0) as f64 / hits as f64))
        }
    }
}

impl Services {
    /// The time zone a report is cut in: the request's, else the tenant's.
    pub(crate) async fn report_zone(
        &self,
        tenant_id: &str,
        requested: Option<&str>,
        field: &str,
    ) -> CoreResult<chrono_tz::Tz> {
        match requested {
            Some(name) => parse_zone(field, name),
            None => {
                let tenant = self.get_tenant(tenant_id).await?;
                Ok(tenant.timezone.parse().unwrap_or(chrono_tz::UTC))
            }
        }
    }

    /// The window of a date filter, for metrics read from `sources`.
    pub(crate) async fn report_window(
        &self,
        tenant_id: &str,
        filter: &DateFilter,
        sources: &[Source],
        field: &str,
    ) -> CoreResult<Window> {
        let tz = self
            .report_zone(tenant_id, filter.time_zone.as_deref(), &format!("{field}timeZone"))
            .await?;
        let first_fact = if filter.grouping == super::api::Grouping::All {
            self.first_fact(tenant_id, sources).await?
        } else {
            None
        };
        Window::new(WindowSpec {
            grouping: filter.grouping,
            from: filter.from,
            to: filter.to,
            tz,
            now: now_ms(),
            first_fact,
            field,
        })
    }

    /// Answers an aggregation report (spec 2.15 → 2.17).
    pub async fn aggregate_report(
        &self,
        tenant_id: &str,
        report: Report,
        request: &ReportRequest,
        strategy: Strategy,
    ) -> CoreResult<AggregationResponse> {
        let queries = plan(report, request)?;
        let sources: Vec<Source> = queries.iter().flat_map(|q| q.def.measure.sources()).collect();
        let window = self
            .report_window(tenant_id, &request.date_filter, &sources, "dateFilter.")
            .await?;
        let mut results: BTreeMap<String, BTreeMap<String, String>> = window
            .buckets()
            .into_iter()
            .map(|b| (window.label(b), BTreeMap::new()))
            .collect();
        for query in &queries {
            let (grids, group_kind) = self.measure_grids(tenant_id, &window, query, strategy).await?;
            let mut keys: HashSet<(i64, String)> = HashSet::new();
            for grid in &grids {
                keys.extend(grid.keys().cloned());
            }
            if group_kind.is_empty() {
                for b in window.buckets() {
                    let key = (b, String::new());
                    if let Some(value) = cell(query.def, &grids, &key) {
                        results
                            .entry(window.label(b))
                            .or_default()
                            .insert(query.def.name.to_string(), value);
                    }
                }
            } else {
                for key in keys {
                    if let Some(value) = cell(query.def, &grids, &key) {
                        if let Some(bucket) = results.get_mut(&window.label(key.0)) {
                            bucket.insert(key.1.clone(), value);
                        }
                    }
                }
            }
        }
        Ok(AggregationResponse { results })
    }

    /// The grids of every source of a query's measure, and the group kind used.
    async fn measure_grids(
        &self,
        tenant_id: &str,
        window: &Window,
        query: &Query,
        strategy: Strategy,
    ) -> CoreResult<(Vec<Grid>, &'static str)> {
        let mut grids = Vec::new();
        if query.def.measure == Measure::DistinctVisitors {
            // One row per (bucket, visitor); the count of rows per bucket is the
            // number of distinct visitors.
            let by_visitor = self
                .source_grid(tenant_id, window, Source::Visits, "VISITOR", &query.filter, strategy)
                .await?;
            let mut grid = Grid::new();
            for (b, _) in by_visitor.keys() {
                grid.entry((*b, String::new())).or_default().1 += 1;
            }
            grids.push(grid);
            return Ok((grids, ""));
        }
        for source in query.def.measure.sources() {
            grids.push(
                self.source_grid(tenant_id, window, source, query.group_kind, &query.filter, strategy)
                    .await?,
            );
        }
        Ok((grids, query.group_kind))
    }

    /// One source's grid, from rollups where they apply, else from raw facts.
    pub(crate) async fn source_grid(
        &self,
        tenant_id: &str,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        strategy: Strategy,
    ) -> CoreResult<Grid> {
        let mut grid = Grid::new();
        let fast = strategy == Strategy::Rollups && window.hour_aligned() && filter.rollup_compatible();
        if !fast {
            self.raw_grid(
                tenant_id,
                window,
                source,
                group_kind,
                filter,
                window.start,
                window.end,
                false,
                &mut grid,
            )
            .await?;
            return Ok(grid);
        }
        let aligned_start = (window.start + HOUR - 1).div_euclid(HOUR) * HOUR;
        let aligned_end = window.end.div_euclid(HOUR) * HOUR;
        if aligned_start >= aligned_end {
            self.raw_grid(
                tenant_id,
                window,
                source,
                group_kind,
                filter,
                window.start,
                window.end,
                false,
                &mut grid,
            )
            .await?;
            return Ok(grid);
        }
        self.rollup_grid(
            tenant_id,
            window,
            source,
            group_kind,
            filter,
            aligned_start,
            aligned_end,
            &mut grid,
        )
        .await?;
        for (s, e) in [(window.start, aligned_start), (aligned_end, window.end)] {
            if s < e {
                self.raw_grid(tenant_id, window, source, group_kind, filter, s, e, false, &mut grid)
                    .await?;
            }
        }
        if let Source::Presence(_) = source {
            // Rollups hold closed intervals only.
            self.raw_grid(
                tenant_id,
                window,
                source,
                group_kind,
                filter,
                aligned_start,
                aligned_end,
                true,
                &mut grid,
            )
            .await?;
        }
        Ok(grid)
    }

    #[allow(clippy::too_many_arguments)]
    async fn rollup_grid(
        &self,
        tenant_id: &str,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        start: i64,
        end: i64,
        grid: &mut Grid,
    ) -> CoreResult<()> {
        // Rule ids live in the DIM rows; without groupBy they are summed into one key.
        let (read_kind, rekey) = if !filter.rule_ids.is_empty() && group_kind.is_empty() {
            ("DIM", true)
        } else {
            (group_kind, false)
        };
        let kind = source.rollup_kind();
        let len = window.unit.len_ms();
        for seg in window.segments() {
            let (s, e) = (seg.start.max(start), seg.end.min(end));
            if s >= e {
                continue;
            }
            let mut cond = Cond::new();
            cond.any_of(8, "group_key", &filter.rule_ids);
            let sql = format!(
                "select (hour + $6) / $7 as b, group_key, cast(sum(total) as bigint), cast(sum(samples) as bigint) \
                 from report_rollups where tenant_id = $1 and kind = $2 and group_kind = $3 and hour >= $4 and hour < $5{} \
                 group by 1, 2",
                cond.sql
            );
            let rows: Vec<(i64, String, i64, i64)> = with_db!(self.db(), |pool| {
                let q = sqlx::query_as(&sql)
                    .bind(tenant_id)
                    .bind(&kind)
                    .bind(read_kind)
                    .bind(s)
                    .bind(e)
                    .bind(seg.offset)
                    .bind(len);
                bind_cond!(q, cond).fetch_all(pool).await
            })?;
            for (b, key, total, samples) in rows {
                let key = if rekey { String::new() } else { key };
                let cell = grid.entry((b, key)).or_default();
                cell.0 += total;
                cell.1 += samples;
            }
        }
        Ok(())
    }

    /// Adds the raw facts of `[start, end)` to `grid`. For presence, `open_only`
    /// takes only intervals still open.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn raw_grid(
        &self,
        tenant_id: &str,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        start: i64,
        end: i64,
        open_only: bool,
        grid: &mut Grid,
    ) -> CoreResult<()> {
        if let Source::Presence(state) = source {
            return self
                .raw_presence(tenant_id, window, state, group_kind, start, end, open_only, grid)
                .await;
        }
        let (table, at, value, key_column) = match source {
            Source::Fact(_) => (
                "report_facts",
                "at",
                "value",
                match group_kind {
                    "AGENT" => "agent_id",
                    "DIM" => "dim",
                    _ => "",
                },
            ),
            Source::Visits | Source::PageViews => (
                "visits",
                "started_at",
                if source == Source::Visits {
                    "duration_ms"
                } else {
                    "page_views"
                },
                match group_kind {
                    "DIM" => "path",
                    "VISITOR" => "visitor_id",
                    _ => "",
                },
            ),
            Source::Presence(_) => unreachable!("handled above"),
        };
        let len = window.unit.len_ms();
        for seg in window.segments() {
            let (s, e) = (seg.start.max(start), seg.end.min(end));
            if s >= e {
                continue;
            }
            let mut cond = Cond::new();
            let first = 6;
            if let Source::Fact(kind) = source {
                cond.equals(first, "kind", Some(kind));
                cond.any_of(first, "dim", &filter.rule_ids);
            }
            cond.any_of(first, "visitor_id", &filter.visitor_ids);
            cond.any_of(first, "external_id", &filter.external_ids);
            cond.prefix(first, "url", filter.base_url.as_deref());
            cond.tags(first, "tags", &filter.tags);
            let (key_select, group) = if key_column.is_empty() {
                ("''".to_string(), "group by 1")
            } else {
                cond.sql += &format!(" and {key_column} is not null");
                (key_column.to_string(), "group by 1, 2")
            };
            let sql = format!(
                "select ({at} + $4) / $5 as b, {key_select}, cast(sum({value}) as bigint), count(*) from {table} \
                 where tenant_id = $1 and {at} >= $2 and {at} < $3 {} {group}",
                cond.sql
            );
            let rows: Vec<(i64, String, i64, i64)> = with_db!(self.db(), |pool| {
                let q = sqlx::query_as(&sql)
                    .bind(tenant_id)
                    .bind(s)
                    .bind(e)
                    .bind(seg.offset)
                    .bind(len);
                bind_cond!(q, cond).fetch_all(pool).await
            })?;
            for (b, key, total, samples) in rows {
                let cell = grid.entry((b, key)).or_default();
                cell.0 += total;
                cell.1 += samples;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    async fn raw_presence(
        &self,
        tenant_id: &str,
        window: &Window,
        state: &str,
        group_kind: &str,
        start: i64,
        end: i64,
        open_only: bool,
        grid: &mut Grid,
    ) -> CoreResult<()> {
        let now = now_ms();
        for interval in self.presence_intervals(tenant_id, state, start, end, open_only).await? {
            let (s, e) = (interval.1.max(start), interval.2.unwrap_or(now).min(end));
            let key = if group_kind == "AGENT" {
                interval.0.clone()
            } else {
                String::new()
            };
            for (b, ms) in window.split(s, e) {
                if ms > 0 {
                    let cell = grid.entry((b, key.clone())).or_default();
                    cell.0 += ms;
                    cell.1 += 1;
                }
            }
        }
        Ok(())
    }

    /// Presence intervals of `state` overlapping `[start, end)`: (user, start, end).
    pub(crate) async fn presence_intervals(
        &self,
        tenant_id: &str,
        state: &str,
        start: i64,
        end: i64,
        open_only: bool,
    ) -> CoreResult<Vec<(String, i64, Option<i64>)>> {
        let open: Vec<(String, i64, Option<i64>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select user_id, started_at, ended_at from presence_intervals \
             where tenant_id = $1 and state = $2 and ended_at is null and started_at < $3"
        )
        .bind(tenant_id)
        .bind(state)
        .bind(end)
        .fetch_all(pool)
        .await)?;
        if open_only {
            return Ok(open);
        }
        let mut closed: Vec<(String, i64, Option<i64>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select user_id, started_at, ended_at from presence_intervals \
             where tenant_id = $1 and state = $2 and ended_at > $3 and started_at < $4"
        )
        .bind(tenant_id)
        .bind(state)
        .bind(start)
        .bind(end)
        .fetch_all(pool)
        .await)?;
        closed.extend(open);
        Ok(closed)
    }

    /// The earliest fact of any of `sources`, for `ALL`.
    async fn first_fact(&self, tenant_id: &str, sources: &[Source]) -> CoreResult<Option<i64>> {
        let mut first: Option<i64> = None;
        for source in sources {
            let found: Option<i64> = match source {
                Source::Presence(state) => with_db!(self.db(), |pool| sqlx::query_scalar(
                    "select min(started_at) from presence_intervals where tenant_id = $1 and state = $2"
                )
                .bind(tenant_id)
                .bind(*state)
                .fetch_one(pool)
                .await)?,
                Source::Fact(kind) => with_db!(self.db(), |pool| sqlx::query_scalar(
                    "select min(at) from report_facts where tenant_id = $1 and kind = $2"
                )
                .bind(tenant_id)
                .bind(*kind)
                .fetch_one(pool)
                .await)?,
                Source::Visits | Source::PageViews => with_db!(self.db(), |pool| sqlx::query_scalar(
                    "select min(started_at) from visits where tenant_id = $1"
                )
                .bind(tenant_id)
                .fetch_one(pool)
                .await)?,
            };
            first = match (first, found) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        Ok(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn decimals_are_trimmed() {
        assert_eq!(decimal(12.0), "12");
        assert_eq!(decimal(12.5), "12.5");
        assert_eq!(decimal(1.0 / 3.0), "0.33");
        assert_eq!(decimal(0.0), "0");
    }

    #[test]
    fn group_by_with_several_metrics_is_refused() {
        let request = ReportRequest {
            metrics: vec![
                MetricEntry {
                    metric_name: "ONLINE_TIME".into(),
                    group_by: Some("AGENT".into()),
                    ..Default::default()
                },
                MetricEntry {
                    metric_name: "LOGGED_IN_TIME".into(),
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        let CoreError::Validation(errors) = plan(Report::Agent, &request).unwrap_err() else {
            panic!()
        };
        assert_eq!(errors[0].field, "metrics");
        assert_eq!(errors[0].code, "group_by_single_metric");
    }

    #[test]
    fn unknown_metrics_group_bys_and_filters_name_their_field() {
        let request = ReportRequest {
            metrics: vec![MetricEntry {
                metric_name: "NOPE".into(),
                ..Default::default()
            }],
            ..Default::default()
        };
        let CoreError::Validation(errors) = plan(Report::Agent, &request).unwrap_err() else {
            panic!()
        };
        assert_eq!(errors[0].field, "metrics[0].metricName");
        let request = ReportRequest {
            metrics: vec![MetricEntry {
                metric_name: "ONLINE_TIME".into(),
                group_by: Some("TYPE".into()),
                rule_ids: Some(vec!["r".into()]),
                ..Default::default()
            }],
            ..Default::default()
        };
        let CoreError::Validation(errors) = plan(Report::Agent, &request).unwrap_err() else {
            panic!()
        };
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["metrics[0].groupBy", "metrics[0].ruleIds"]);
    }
}
