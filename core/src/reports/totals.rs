//! Period totals: each metric of a request over its whole period, and over the
//! period of the same length just before, for the dashboards' "this period versus
//! the previous one" rows.
//!
//! A total is computed from the same grids as the report, merged across buckets
//! before the measure is applied: an average is total time over all samples, not
//! an average of daily averages. Unique visitors are counted once over the whole
//! period, not summed per day.

use std::collections::HashSet;

use super::{
    api::{MetricTotal, ReportRequest},
    catalogue::{Measure, Report, Source},
    cells::{cell, Grid},
    plan::{plan, Query},
    query::{counts_visitors, Strategy},
    window::Window,
    zones::Period,
};
use crate::{error::CoreResult, ids::TenantId, Services};

impl Services {
    /// Every metric of `request` totalled over its period and the previous one.
    /// `groupBy` is ignored: a total covers every group. [`Strategy::Raw`]
    /// reads raw facts only, as the tests' reference.
    pub async fn report_totals(
        &self,
        tenant_id: &TenantId,
        report: Report,
        request: &ReportRequest,
        strategy: Strategy,
    ) -> CoreResult<Vec<MetricTotal>> {
        let mut request = request.clone();
        for metric in &mut request.metrics {
            metric.group_by = None;
        }
        let queries = &plan(report, &request)?;
        let sources: Vec<Source> = queries.iter().flat_map(|q| q.def.measure.sources()).collect();
        let period = Period {
            filter: &request.date_filter,
            sources: &sources,
            field: "dateFilter.",
        };
        // Unique visitors are counted by statements of their own, which do not
        // check a cached zone state.
        let checked = !counts_visitors(queries);
        let (current, previous) = self
            .in_window(tenant_id, period, checked, |window| async move {
                let current = self.period_totals(tenant_id, &window, queries, strategy).await?;
                let previous = self
                    .period_totals(tenant_id, &window.previous(), queries, strategy)
                    .await?;
                Ok((current, previous))
            })
            .await?;
        Ok(queries
            .iter()
            .zip(current.into_iter().zip(previous))
            .map(|(query, (current, previous))| MetricTotal {
                metric_name: query.def.name.to_string(),
                current,
                previous,
            })
            .collect())
    }

    /// Each query's total over `window`. The additive ones are read together
    /// (see [`Self::measures_grids`]); unique visitors are counted apart.
    async fn period_totals(
        &self,
        tenant_id: &TenantId,
        window: &Window,
        queries: &[Query],
        strategy: Strategy,
    ) -> CoreResult<Vec<Option<String>>> {
        let distinct = |q: &Query| q.def.measure == Measure::DistinctVisitors;
        let additive: Vec<Query> = queries.iter().filter(|q| !distinct(q)).cloned().collect();
        let mut grids = self
            .measures_grids(tenant_id, window, &additive, strategy)
            .await?
            .into_iter();
        let mut out = Vec::with_capacity(queries.len());
        for query in queries {
            if distinct(query) {
                let visitors = match strategy {
                    Strategy::Rollups => self.distinct_visitors(tenant_id, window, &query.filter).await?,
                    Strategy::Raw => self.distinct_visitors_from_grid(tenant_id, window, query).await?,
                };
                out.push(Some(visitors.to_string()));
                continue;
            }
            let (grids, _) = grids.next().unwrap_or_default();
            let key = (0, String::new());
            let merged: Vec<Grid> = grids
                .into_iter()
                .map(|grid| {
                    let mut one = Grid::default();
                    let cell = one.entry(key.clone()).or_default();
                    for (total, samples) in grid.into_values() {
                        cell.0 += total;
                        cell.1 += samples;
                    }
                    one
                })
                .collect();
            out.push(cell(query.def, &merged, &key));
        }
        Ok(out)
    }

    /// Distinct visitors over `window`, gathered per visitor from raw visits:
    /// the reference for [`Self::distinct_visitors`].
    async fn distinct_visitors_from_grid(
        &self,
        tenant_id: &TenantId,
        window: &Window,
        query: &Query,
    ) -> CoreResult<i64> {
        let by_visitor = self
            .source_grid(
                tenant_id,
                window,
                Source::Visits,
                "VISITOR",
                &query.filter,
                Strategy::Raw,
            )
            .await?;
        let visitors: HashSet<&String> = by_visitor.keys().map(|(_, visitor)| visitor).collect();
        Ok(visitors.len() as i64)
    }
}
