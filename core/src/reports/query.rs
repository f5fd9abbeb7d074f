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
//!
//! A report's round trips, not its rows, are most of its cost on a small
//! history, so the day, hourly and raw reads of a group of sources go out as
//! one statement (see [`super::reads`]), and a report is planned with the
//! tenant's cached zone state, which that statement checks (see
//! [`super::zones`]): most reports are one round trip.

use std::{collections::BTreeMap, sync::Arc};

use chrono_tz::Tz;

use super::{
    api::{AggregationResponse, DateFilter, ReportRequest},
    catalogue::{Measure, Report, Source},
    cells::{cells, Grid},
    plan::{plan, Filter, Query},
    reads::Reads,
    window::{Window, WindowSpec, ZoneCheck},
    zones::{requested_zone, Period, ZoneState},
};
use crate::{error::CoreResult, ids::TenantId, time::now_ms, with_db, Services};

/// Which path answers: the fast one, or raw facts only (tests, benchmark baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// Rollups where they apply.
    Rollups,
    /// Raw facts only.
    Raw,
}

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

/// Whether any of `queries` counts unique visitors, whose per-day counts are
/// read apart from [`Reads`] (so the zone state is read first).
pub(crate) fn counts_visitors(queries: &[Query]) -> bool {
    queries.iter().any(|q| q.def.measure == Measure::DistinctVisitors)
}

/// Plans a part of a period for `target`: whole UTC hours from hourly rollups
/// where they apply, the partial hours at its edges (and everything else) from
/// raw facts.
#[allow(clippy::too_many_arguments)]
fn plan_hours(
    reads: &mut Reads,
    target: usize,
    tenant_id: &TenantId,
    window: &Window,
    source: Source,
    group_kind: &str,
    filter: &Filter,
    strategy: Strategy,
) {
    let fast = strategy == Strategy::Rollups && window.hour_aligned() && filter.rollup_compatible();
    let (aligned_start, aligned_end) = window.whole_hours();
    if !fast || aligned_start >= aligned_end {
        let whole = (window.start, window.end);
        reads.raw(target, tenant_id, window, source, group_kind, filter, whole, false);
        return;
    }
    let (read_kind, _) = rollup_read_kind(group_kind, filter);
    let hours = (aligned_start, aligned_end);
    reads.rollups(
        target,
        tenant_id,
        window,
        &source.rollup_kind(),
        read_kind,
        filter,
        hours,
    );
    for edge in [(window.start, aligned_start), (aligned_end, window.end)] {
        if edge.0 < edge.1 {
            reads.raw(target, tenant_id, window, source, group_kind, filter, edge, false);
        }
    }
    if let Source::Presence(_) = source {
        // Rollups hold closed intervals only.
        reads.raw(target, tenant_id, window, source, group_kind, filter, hours, true);
    }
}

impl Services {
    /// The window of a date filter, for metrics read from `sources`, cut in the
    /// request's zone, else the tenant's, which is read first. See
    /// [`Self::in_window`] for a report planned with a cached zone.
    pub(crate) async fn report_window(
        &self,
        tenant_id: &TenantId,
        filter: &DateFilter,
        sources: &[Source],
        field: &str,
    ) -> CoreResult<Window> {
        let requested = requested_zone(filter, field)?;
        let state = self.read_zone_state(tenant_id).await?;
        let period = Period { filter, sources, field };
        self.plan_window(tenant_id, &state, None, requested, period).await
    }

    /// The window of a period planned with the zone state `state`: the
    /// request's zone (`requested`), else the tenant's; the day rollups are
    /// used when they are kept in that zone. `check`, when the state came from
    /// the cache, rides along with the window to every statement.
    pub(crate) async fn plan_window(
        &self,
        tenant_id: &TenantId,
        state: &ZoneState,
        check: Option<Arc<ZoneCheck>>,
        requested: Option<Tz>,
        period: Period<'_>,
    ) -> CoreResult<Window> {
        let tz = requested.unwrap_or(state.tenant_zone);
        let filter = period.filter;
        let first_fact = if filter.grouping == super::api::Grouping::All {
            self.first_fact(tenant_id, period.sources).await?
        } else {
            None
        };
        let mut window = Window::new(WindowSpec {
            grouping: filter.grouping,
            from: filter.from,
            to: filter.to,
            tz,
            now: now_ms(),
            first_fact,
            field: period.field,
        })?;
        window.kept_days = state.kept_days(tz);
        window.check = check;
        Ok(window)
    }

    /// Answers an aggregation report (spec 2.15 → 2.17).
    ///
    /// It is planned with the tenant's cached zone state (see
    /// [`super::zones`]), so a report is one statement, unless it counts
    /// unique visitors, whose per-day counts are read apart and so read the
    /// zone state first.
    pub async fn aggregate_report(
        &self,
        tenant_id: &TenantId,
        report: Report,
        request: &ReportRequest,
        strategy: Strategy,
    ) -> CoreResult<AggregationResponse> {
        let queries = &plan(report, request)?;
        let sources: Vec<Source> = queries.iter().flat_map(|q| q.def.measure.sources()).collect();
        let period = Period {
            filter: &request.date_filter,
            sources: &sources,
            field: "dateFilter.",
        };
        let checked = !counts_visitors(queries);
        let emails = if queries.iter().any(|q| q.keyed_by_email) {
            crate::users::emails_by_id(self.db(), tenant_id).await?
        } else {
            Default::default()
        };
        let emails = &emails;
        self.in_window(tenant_id, period, checked, |window| async move {
            let labels = window.labels();
            let mut buckets: Vec<BTreeMap<String, String>> = vec![BTreeMap::new(); labels.len()];
            let all = self.measures_grids(tenant_id, &window, queries, strategy).await?;
            for (query, (grids, group_kind)) in queries.iter().zip(all) {
                for (b, key, value) in cells(query.def, &grids, group_kind, &labels) {
                    if let Some(i) = labels.index(b) {
                        let key = if group_kind.is_empty() {
                            query.def.name.to_string()
                        } else if query.keyed_by_email {
                            // A deleted agent's facts keep their id: no address is left.
                            emails.get(&key).cloned().unwrap_or(key)
                        } else {
                            key
                        };
                        buckets[i].insert(key, value);
                    }
                }
            }
            Ok(AggregationResponse {
                results: labels.keyed(buckets),
            })
        })
        .await
    }

    /// [`Self::measure_grids`] for each of `queries`, in order. Queries that
    /// read with the same group kind and filter share one [`Self::source_grids`]
    /// call, so a page of several metrics reads the day rollups and each source
    /// once rather than once per metric: the cost of a report is dominated by
    /// its round trips to the database, not by the rows they return.
    pub(crate) async fn measures_grids(
        &self,
        tenant_id: &TenantId,
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
        tenant_id: &TenantId,
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
        tenant_id: &TenantId,
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
    /// [`plan_hours`]), in one more statement (see [`super::reads`]).
    pub(crate) async fn source_grids(
        &self,
        tenant_id: &TenantId,
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
        let mut grids = vec![Grid::default(); sources.len()];
        let mut reads = Reads::default();
        if let Some(span) = days {
            let read_kind = rollup_read_kind(group_kind, filter).0;
            for (target, source) in sources.iter().enumerate() {
                let kind = source.rollup_kind();
                reads.days(target, tenant_id, window, &kind, read_kind, filter, span);
                if let Source::Presence(_) = source {
                    // Rollups hold closed intervals only.
                    reads.raw(target, tenant_id, window, *source, group_kind, filter, span, true);
                }
            }
        }
        for part in &rest {
            for (target, source) in sources.iter().enumerate() {
                plan_hours(
                    &mut reads, target, tenant_id, part, *source, group_kind, filter, strategy,
                );
            }
        }
        // Sums add up, whichever part of the period they came from.
        reads
            .run(self, &mut grids, rollup_read_kind(group_kind, filter).1)
            .await?;
        Ok(grids)
    }

    /// The earliest fact of any of `sources`, for `ALL`.
    async fn first_fact(&self, tenant_id: &TenantId, sources: &[Source]) -> CoreResult<Option<i64>> {
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
