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
    cells::cell,
    plan::{plan, Query},
    query::{Grid, Strategy},
    window::Window,
};
use crate::{error::CoreResult, Services};

impl Services {
    /// Every metric of `request` totalled over its period and the previous one.
    /// `groupBy` is ignored: a total covers every group.
    pub async fn report_totals(
        &self,
        tenant_id: &str,
        report: Report,
        request: &ReportRequest,
    ) -> CoreResult<Vec<MetricTotal>> {
        let mut request = request.clone();
        for metric in &mut request.metrics {
            metric.group_by = None;
        }
        let queries = plan(report, &request)?;
        let sources: Vec<Source> = queries.iter().flat_map(|q| q.def.measure.sources()).collect();
        let window = self
            .report_window(tenant_id, &request.date_filter, &sources, "dateFilter.")
            .await?;
        let previous = window.previous();
        let mut out = Vec::with_capacity(queries.len());
        for query in &queries {
            out.push(MetricTotal {
                metric_name: query.def.name.to_string(),
                current: self.total(tenant_id, &window, query).await?,
                previous: self.total(tenant_id, &previous, query).await?,
            });
        }
        Ok(out)
    }

    async fn total(&self, tenant_id: &str, window: &Window, query: &Query) -> CoreResult<Option<String>> {
        if query.def.measure == Measure::DistinctVisitors {
            let by_visitor = self
                .source_grid(
                    tenant_id,
                    window,
                    Source::Visits,
                    "VISITOR",
                    &query.filter,
                    Strategy::Rollups,
                )
                .await?;
            let visitors: HashSet<&String> = by_visitor.keys().map(|(_, visitor)| visitor).collect();
            return Ok(Some(visitors.len().to_string()));
        }
        let (grids, _) = self.measure_grids(tenant_id, window, query, Strategy::Rollups).await?;
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
        Ok(cell(query.def, &merged, &key))
    }
}
