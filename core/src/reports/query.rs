//! Answering report requests.
//!
//! A metric is computed per *source* (see [`Source`]) as a grid of
//! `(bucket, group key) → (total, samples)`, then combined by its [`Measure`].
//! Each grid comes from one of two paths that must agree:
//! - **day rollups**: daily sums in the tenant's zone (see [`super::days`]) for
//!   the whole local days of a day-bucketed period in that zone; one row per
//!   day and group. The rest of the period takes the next path.
//! - **rollups**: hourly sums, bucketed per constant-offset segment with
//!   `(hour + offset) / bucket_len` in SQL. Cost grows with the hours in the
//!   period, never with the facts. Used when every offset of the period is a whole
//!   number of hours, the buckets are hours or days, and the filters are ones the
//!   rollups keep (agent, second dimension, rule ids). The partial hours at the
//!   period's edges, and presence intervals still open, come from raw facts.
//!   Unique visitors per day come from per-day counts (see [`super::visitors`]).
//! - **raw**: the same `GROUP BY` over the fact tables. Exact for any zone and any
//!   filter; the benchmark's baseline and the tests' reference.

use std::collections::{BTreeMap, HashMap};

use super::{
    api::{AggregationResponse, DateFilter, ReportRequest},
    catalogue::{Measure, Report, Source},
    cells::cells,
    plan::{plan, Filter, Query},
    window::{parse_zone, Window, WindowSpec},
};
use super::{
    days::DayRows,
    sql::{bind_cond, Cond},
};
use crate::{error::CoreResult, time::now_ms, with_db, Services};

/// Which path answers: the fast one, or raw facts only (tests, benchmark baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Rollups where they apply.
    Rollups,
    /// Raw facts only.
    Raw,
}

/// `(bucket, group key) → (total, samples)`. Hashed with FxHash: a year split
/// by 50 agents hashes some 100,000 keys per report, and SipHash's protection
/// against chosen keys buys nothing for keys the server made itself.
pub(crate) type Grid = HashMap<(i64, String), (i64, i64), rustc_hash::FxBuildHasher>;

/// The rollup group kind to read for `group_kind`, and whether to sum the keys
/// into one: rule ids live in the `DIM` rows, so a rule filter without `groupBy`
/// reads those and adds them up.
fn rollup_read_kind<'a>(group_kind: &'a str, filter: &Filter) -> (&'a str, bool) {
    if !filter.rule_ids.is_empty() && group_kind.is_empty() {
        ("DIM", true)
    } else {
        (group_kind, false)
    }
}

/// Adds rollup rows `(bucket, key, total, samples)` to `grid`; with `rekey`,
/// all under the empty key.
fn add_rows(grid: &mut Grid, rows: Vec<(i64, String, i64, i64)>, rekey: bool) {
    for (b, key, total, samples) in rows {
        let key = if rekey { String::new() } else { key };
        let cell = grid.entry((b, key)).or_default();
        cell.0 += total;
        cell.1 += samples;
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
        let labels = window.labels();
        let mut results: BTreeMap<String, BTreeMap<String, String>> =
            labels.values().map(|label| (label.clone(), BTreeMap::new())).collect();
        let all = self.measures_grids(tenant_id, &window, &queries, strategy).await?;
        for (query, (grids, group_kind)) in queries.iter().zip(all) {
            for (b, key, value) in cells(query.def, &grids, group_kind, &labels) {
                if let Some(bucket) = results.get_mut(&labels[&b]) {
                    let key = if group_kind.is_empty() {
                        query.def.name.to_string()
                    } else {
                        key
                    };
                    bucket.insert(key, value);
                }
            }
        }
        Ok(AggregationResponse { results })
    }

    /// [`Self::measure_grids`] for each of `queries`, in order. Queries that
    /// read with the same group kind and filter share one [`Self::source_grids`]
    /// call, so a page of several metrics reads the day rollups and each source
    /// once rather than once per metric: the cost of a report is dominated by
    /// its round trips to the database, not by the rows they return.
    pub(crate) async fn measures_grids(
        &self,
        tenant_id: &str,
        window: &Window,
        queries: &[Query],
        strategy: Strategy,
    ) -> CoreResult<Vec<(Vec<Grid>, &'static str)>> {
        let mut out: Vec<Option<(Vec<Grid>, &'static str)>> = vec![None; queries.len()];
        for (i, query) in queries.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            if query.def.measure == Measure::DistinctVisitors {
                out[i] = Some(self.measure_grids(tenant_id, window, query, strategy).await?);
                continue;
            }
            let group: Vec<usize> = (i..queries.len())
                .filter(|&j| {
                    let other = &queries[j];
                    out[j].is_none()
                        && other.def.measure != Measure::DistinctVisitors
                        && other.group_kind == query.group_kind
                        && other.filter == query.filter
                })
                .collect();
            // The group's sources, each once, and where each query's are in it.
            let mut sources: Vec<Source> = Vec::new();
            let picks: Vec<Vec<usize>> = group
                .iter()
                .map(|&j| {
                    let mine = queries[j].def.measure.sources();
                    mine.into_iter()
                        .map(|source| match sources.iter().position(|s| *s == source) {
                            Some(k) => k,
                            None => {
                                sources.push(source);
                                sources.len() - 1
                            }
                        })
                        .collect()
                })
                .collect();
            let mut read = self
                .source_grids(tenant_id, window, &sources, query.group_kind, &query.filter, strategy)
                .await?;
            // Each query gets its own copy of a shared grid; the last user takes it.
            let mut uses = vec![0usize; sources.len()];
            picks.iter().flatten().for_each(|&k| uses[k] += 1);
            for (&j, pick) in group.iter().zip(&picks) {
                let grids = pick
                    .iter()
                    .map(|&k| {
                        uses[k] -= 1;
                        if uses[k] == 0 {
                            std::mem::take(&mut read[k])
                        } else {
                            read[k].clone()
                        }
                    })
                    .collect();
                out[j] = Some((grids, queries[j].group_kind));
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    /// The grids of every source of a query's measure, and the group kind used.
    pub(crate) async fn measure_grids(
        &self,
        tenant_id: &str,
        window: &Window,
        query: &Query,
        strategy: Strategy,
    ) -> CoreResult<(Vec<Grid>, &'static str)> {
        if query.def.measure == Measure::DistinctVisitors {
            let mut grid = Grid::default();
            let mut rest = vec![window.clone()];
            if strategy == Strategy::Rollups && query.filter.is_empty() {
                if let Some((counts, remainder)) = self.visitor_day_counts(tenant_id, window).await? {
                    for (b, visitors) in counts {
                        grid.entry((b, String::new())).or_default().1 += visitors;
                    }
                    rest = remainder;
                }
            }
            // The parts share no bucket: they are cut at local midnights.
            for part in rest {
                // One row per (bucket, visitor); the count of rows per bucket is
                // the number of distinct visitors.
                let by_visitor = self
                    .source_grid(tenant_id, &part, Source::Visits, "VISITOR", &query.filter, strategy)
                    .await?;
                for (b, _) in by_visitor.keys() {
                    grid.entry((*b, String::new())).or_default().1 += 1;
                }
            }
            return Ok((vec![grid], ""));
        }
        let sources = query.def.measure.sources();
        let grids = self
            .source_grids(tenant_id, window, &sources, query.group_kind, &query.filter, strategy)
            .await?;
        Ok((grids, query.group_kind))
    }

    /// One source's grid; see [`Self::source_grids`].
    pub(crate) async fn source_grid(
        &self,
        tenant_id: &str,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        strategy: Strategy,
    ) -> CoreResult<Grid> {
        let mut grids = self
            .source_grids(tenant_id, window, &[source], group_kind, filter, strategy)
            .await?;
        Ok(grids.pop().unwrap_or_default())
    }

    /// The grids of `sources` (one each, in order), all with the same group
    /// kind and filter: whole local days from day rollups where they apply (one
    /// read for every source), the rest from hourly rollups and raw facts (see
    /// [`Self::hourly_grid`]).
    pub(crate) async fn source_grids(
        &self,
        tenant_id: &str,
        window: &Window,
        sources: &[Source],
        group_kind: &str,
        filter: &Filter,
        strategy: Strategy,
    ) -> CoreResult<Vec<Grid>> {
        let days = if strategy == Strategy::Rollups && filter.rollup_compatible() && group_kind != "VISITOR" {
            self.day_span(tenant_id, window).await?
        } else {
            None
        };
        let rest: Vec<Window> = match days {
            Some((start, end)) => [window.clip(window.start, start), window.clip(end, window.end)]
                .into_iter()
                .flatten()
                .collect(),
            None => vec![window.clone()],
        };
        // The whole days (one read for every source) and the rest.
        let whole_days = async {
            let mut grids = vec![Grid::default(); sources.len()];
            if let Some((start, end)) = days {
                self.day_grids(tenant_id, window, sources, group_kind, filter, (start, end), &mut grids)
                    .await?;
            }
            Ok::<_, crate::CoreError>(grids)
        };
        let remainder = async {
            let mut grids = vec![Grid::default(); sources.len()];
            for part in &rest {
                for (source, grid) in sources.iter().zip(&mut grids) {
                    self.hourly_grid(tenant_id, part, *source, group_kind, filter, strategy, grid)
                        .await?;
                }
            }
            Ok::<_, crate::CoreError>(grids)
        };
        // One after the other. Reading both at once on two connections gained
        // nothing measurable, and a PostgreSQL report page then timed out once
        // under the test suite's parallel load.
        let mut grids = whole_days.await?;
        let remainder = remainder.await?;
        // Sums add up, whichever part of the period they came from.
        for (grid, part) in grids.iter_mut().zip(remainder) {
            for (key, (total, samples)) in part {
                let cell = grid.entry(key).or_default();
                cell.0 += total;
                cell.1 += samples;
            }
        }
        Ok(grids)
    }

    /// Adds the day rows of `sources` for the local days `[start, end)` to their
    /// grids (one read for all of them), and presence intervals still open.
    #[allow(clippy::too_many_arguments)]
    async fn day_grids(
        &self,
        tenant_id: &str,
        window: &Window,
        sources: &[Source],
        group_kind: &str,
        filter: &Filter,
        (start, end): (i64, i64),
        grids: &mut [Grid],
    ) -> CoreResult<()> {
        let (read_kind, rekey) = rollup_read_kind(group_kind, filter);
        let mut cond = Cond::new();
        cond.any_of(6, "group_key", &filter.rule_ids);
        // Each kind is read once, even when two sources share it.
        let mut kinds: Vec<String> = Vec::new();
        let mut targets: Vec<Vec<usize>> = Vec::new();
        for (i, source) in sources.iter().enumerate() {
            let kind = source.rollup_kind();
            match kinds.iter().position(|k| *k == kind) {
                Some(k) => targets[k].push(i),
                None => {
                    kinds.push(kind);
                    targets.push(vec![i]);
                }
            }
        }
        let rows = self
            .day_rows(DayRows {
                tenant_id,
                zone: window.tz,
                kinds: &kinds,
                group_kind: read_kind,
                start,
                end,
                cond: &cond,
            })
            .await?;
        // Buckets are local days here, so each day row is one bucket's value
        // for one group: nothing to sum in SQL.
        let mut buckets = HashMap::new();
        for (kind, day, key, total, samples) in rows {
            let b = *buckets.entry(day).or_insert_with(|| window.bucket_of(day));
            let key = if rekey { String::new() } else { key };
            for &target in &targets[kind] {
                let cell = grids[target].entry((b, key.clone())).or_default();
                cell.0 += total;
                cell.1 += samples;
            }
        }
        for (source, grid) in sources.iter().zip(grids.iter_mut()) {
            if let Source::Presence(_) = source {
                // Rollups hold closed intervals only.
                self.raw_grid(tenant_id, window, *source, group_kind, filter, start, end, true, grid)
                    .await?;
            }
        }
        Ok(())
    }

    /// Adds a part of a period to `grid`: whole UTC hours from hourly rollups
    /// where they apply, the partial hours at its edges (and everything else)
    /// from raw facts.
    #[allow(clippy::too_many_arguments)]
    async fn hourly_grid(
        &self,
        tenant_id: &str,
        window: &Window,
        source: Source,
        group_kind: &str,
        filter: &Filter,
        strategy: Strategy,
        grid: &mut Grid,
    ) -> CoreResult<()> {
        let fast = strategy == Strategy::Rollups && window.hour_aligned() && filter.rollup_compatible();
        let (aligned_start, aligned_end) = window.whole_hours();
        if !fast || aligned_start >= aligned_end {
            return self
                .raw_grid(
                    tenant_id,
                    window,
                    source,
                    group_kind,
                    filter,
                    window.start,
                    window.end,
                    false,
                    grid,
                )
                .await;
        }
        self.rollup_grid(
            tenant_id,
            window,
            source,
            group_kind,
            filter,
            aligned_start,
            aligned_end,
            grid,
        )
        .await?;
        for (s, e) in [(window.start, aligned_start), (aligned_end, window.end)] {
            if s < e {
                self.raw_grid(tenant_id, window, source, group_kind, filter, s, e, false, grid)
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
                grid,
            )
            .await?;
        }
        Ok(())
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
        let (read_kind, rekey) = rollup_read_kind(group_kind, filter);
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
            add_rows(grid, rows, rekey);
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
            cond.visit_filters(first, filter);
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
