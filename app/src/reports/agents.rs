//! The reports drawn per agent: one metric with a column per agent, and the
//! presence timeline.

use chrono::TimeZone;
use rapport_core::{
    error::CoreResult,
    reports::{
        api::DateFilter,
        catalogue::{Measure, MetricDef},
        query::Strategy,
        times::TimesKind,
    },
    Services,
};

use super::{agent_names, chart, key_of, label_of, number, request_for, summary};
use crate::{
    api::reports::view::{ChartSpec, Column, Family, ReportView, Series},
    charts,
};

/// One metric per agent: the table has a column per agent, the chart stacks them.
pub(super) async fn per_agent(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    family: Family,
    def: &'static MetricDef,
    filter: &DateFilter,
    view: &mut ReportView,
) -> CoreResult<()> {
    let request = request_for(&[def], Some("AGENT"), filter);
    let answer = services
        .aggregate_report(tenant_id, def.report, &request, Strategy::Rollups)
        .await?;
    let totals = services
        .report_totals(tenant_id, def.report, &request, Strategy::Rollups)
        .await?;
    for total in totals {
        view.summary.push(summary(
            label_of(def, family),
            def.unit.as_str(),
            total.current,
            total.previous,
        ));
    }
    let names = agent_names(services, tenant_id).await?;
    let mut agents: Vec<String> = answer.results.values().flat_map(|b| b.keys().cloned()).collect();
    agents.sort_unstable();
    agents.dedup();
    let name = |id: &String| names.get(id).cloned().unwrap_or_else(|| format!("Former agent {id}"));
    agents.sort_by_key(|id| name(id).to_lowercase());
    view.by_agent = Some(key_of(def, family));
    view.labels = answer.results.keys().cloned().collect();
    view.columns = agents
        .iter()
        .map(|id| Column {
            key: id.clone(),
            label: name(id),
            unit: def.unit.as_str().to_string(),
        })
        .collect();
    view.cells = answer
        .results
        .values()
        .map(|bucket| {
            agents
                .iter()
                .map(|a| bucket.get(a).cloned().unwrap_or_default())
                .collect()
        })
        .collect();
    let series: Vec<Series> = view
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                c.label.clone(),
                view.cells.iter().map(|row| number(row.get(i))).collect(),
            )
        })
        .collect();
    let unit = def.unit.as_str();
    // Sums and counts stack; averages and rates do not add up, so they are lines.
    let (labels, y_desc) = (view.labels.clone(), unit.to_string());
    let spec = if matches!(def.measure, Measure::Sum(_) | Measure::Count(_)) {
        ChartSpec::StackedBars { labels, series, y_desc }
    } else {
        ChartSpec::Lines { labels, series, y_desc }
    };
    view.charts
        .push(chart(format!("{} per agent ({unit})", label_of(def, family)), spec));
    Ok(())
}

pub(super) async fn presence_timeline(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    filter: &DateFilter,
    tz: chrono_tz::Tz,
    view: &mut ReportView,
) -> CoreResult<()> {
    let times = services.agent_times(tenant_id, TimesKind::Online, filter).await?;
    let names = agent_names(services, tenant_id).await?;
    let ranges: Vec<(i64, i64)> = times
        .iter()
        .flat_map(|t| t.time_ranges.iter())
        .map(|r| (r.start.timestamp_millis(), r.end.timestamp_millis()))
        .collect();
    let (Some(start), Some(end)) = (ranges.iter().map(|r| r.0).min(), ranges.iter().map(|r| r.1).max()) else {
        return Ok(());
    };
    // From the first local midnight on or before the first interval.
    let origin = tz
        .timestamp_millis_opt(start)
        .single()
        .and_then(|t| tz.from_local_datetime(&t.date_naive().and_hms_opt(0, 0, 0)?).earliest())
        .map_or(start, |t| t.timestamp_millis());
    let hours = |ms: i64| (ms - origin) as f64 / 3_600_000.0;
    let rows: Vec<(String, Vec<(f64, f64)>)> = times
        .iter()
        .map(|t| {
            (
                names
                    .get(t.user_id.as_str())
                    .cloned()
                    .unwrap_or_else(|| t.user_id.to_string()),
                t.time_ranges
                    .iter()
                    .map(|r| (hours(r.start.timestamp_millis()), hours(r.end.timestamp_millis())))
                    .collect(),
            )
        })
        .collect();
    let span = hours(end);
    view.charts.push(chart(
        "Online time per agent".into(),
        ChartSpec::Timeline {
            ticks: charts::timeline_ticks(tz, origin, end),
            rows,
            span,
        },
    ));
    Ok(())
}
