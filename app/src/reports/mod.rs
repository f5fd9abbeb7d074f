//! Server side of the report pages (see [`crate::api::reports`]): builds the same
//! requests the REST operations take, runs them through the same services, and
//! turns the answers into tables, totals, charts and CSV.

use std::collections::HashMap;

use chrono::{NaiveDate, TimeZone};
use rapport_core::{
    error::CoreResult,
    model::PageRequest,
    reports::{
        api::{AggregationResponse, DateFilter, Grouping, MetricEntry, ReportRequest},
        catalogue::{MetricDef, Report, METRICS},
        query::Strategy,
    },
    validate::Checks,
    Services,
};

use crate::{
    api::reports::view::{Chart, ChartSpec, Column, Family, ReportQuery, ReportView, Series, Summary},
    charts,
};

mod agents;
mod download;
mod visitor_script;

use agents::{per_agent, presence_timeline};
use visitor_script::{resources, script_errors};

pub use download::csv;

/// The aggregation reports a family shows.
fn reports_of(family: Family) -> &'static [Report] {
    match family {
        Family::Agents => &[Report::Agent],
        Family::Chats => &[Report::Chat],
        Family::Messages => &[Report::Message],
        Family::Sessions => &[Report::Session],
        Family::Visits => &[Report::Visit],
        Family::Cobrowse => &[Report::Cobrowse, Report::CobrowseUniversal],
        Family::Conferences => &[Report::Conference],
        Family::Rules => &[Report::Rule],
        Family::Resources | Family::ScriptErrors => &[],
    }
}

/// A metric's column key: its name, prefixed when a family has two reports.
fn key_of(def: &MetricDef, family: Family) -> String {
    if reports_of(family).len() > 1 && def.report != reports_of(family)[0] {
        format!("{}:{}", def.report.path(), def.name)
    } else {
        def.name.to_string()
    }
}

/// `ONLINE_TIME` → "Online time"; a second report's metrics say which.
fn label_of(def: &MetricDef, family: Family) -> String {
    let mut label = sentence_case(def.name);
    if key_of(def, family) != def.name {
        label = format!("{label} ({})", def.report.path().replace('/', " "));
    }
    label
}

/// Words of metric names that stay in capitals: "CSAT average", not "Csat average".
const ACRONYMS: [&str; 2] = ["CSAT", "SLA"];

/// `RESOURCE_LOADS` → "Resource loads"; `CSAT_AVERAGE` → "CSAT average".
fn sentence_case(name: &str) -> String {
    let words: Vec<String> = name
        .split('_')
        .map(|w| {
            if ACRONYMS.contains(&w) {
                w.to_string()
            } else {
                w.to_lowercase()
            }
        })
        .collect();
    let text = words.join(" ");
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().collect::<String>() + chars.as_str())
        .unwrap_or_default()
}

fn metrics_of(report: Report) -> impl Iterator<Item = &'static MetricDef> {
    METRICS
        .iter()
        .filter(move |d| d.report == report && report.default_group_by().is_none())
}

/// The date filter of a page query, in the tenant's zone `tz`.
fn date_filter(query: &ReportQuery, tz: chrono_tz::Tz) -> CoreResult<DateFilter> {
    let grouping: Grouping = if query.grouping.is_empty() {
        Grouping::Last7Days
    } else {
        serde_json::from_value(serde_json::Value::String(query.grouping.clone())).map_err(|_| {
            let mut checks = Checks::new();
            checks.push("grouping", "invalid", "pick one of the listed periods");
            checks.finish().unwrap_err()
        })?
    };
    let mut filter = DateFilter {
        grouping,
        ..Default::default()
    };
    if grouping == Grouping::Custom {
        let mut checks = Checks::new();
        let mut date = |field: &str, value: &str| {
            let date = NaiveDate::parse_from_str(value, "%Y-%m-%d").ok();
            if date.is_none() {
                checks.push(field, "invalid", "enter a date as YYYY-MM-DD");
            }
            date
        };
        let (from, to) = (date("from", &query.from), date("to", &query.to));
        checks.finish()?;
        let midnight = |d: NaiveDate| {
            d.and_hms_opt(0, 0, 0)
                .and_then(|t| tz.from_local_datetime(&t).earliest())
                .map(|t| t.timestamp_millis())
        };
        // The last day is included: the range ends where the next day starts.
        filter.from = from.and_then(midnight);
        filter.to = to.and_then(|d| d.succ_opt()).and_then(midnight);
    }
    Ok(filter)
}

async fn agent_names(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
) -> CoreResult<HashMap<String, String>> {
    let mut names = HashMap::new();
    let mut page_number = 0;
    loop {
        let page = PageRequest {
            page_number: Some(page_number),
            page_size: Some(PageRequest::MAX_PAGE_SIZE),
            offset: None,
        };
        let page = services.list_users(tenant_id, None, &page).await?;
        for user in page.results {
            names.insert(user.id.to_string(), user.display_name.unwrap_or(user.email));
        }
        if page.page.page_number + 1 >= page.page.total_pages {
            return Ok(names);
        }
        page_number += 1;
    }
}

/// A cell as a chart value: `None` when the report has none (undefined).
fn number(value: Option<&String>) -> Option<f64> {
    value.and_then(|v| v.parse().ok())
}

/// The page of `query` for a tenant.
pub async fn view(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    query: &ReportQuery,
) -> CoreResult<ReportView> {
    let family = Family::from_slug(&query.family).ok_or(rapport_core::CoreError::NotFound("report"))?;
    let tenant = services.get_tenant(tenant_id).await?;
    let tz: chrono_tz::Tz = tenant.timezone.parse().unwrap_or(chrono_tz::UTC);
    let filter = date_filter(query, tz)?;
    let mut view = ReportView {
        family,
        grouping: filter.grouping.as_str().to_string(),
        period: String::new(),
        labels: Vec::new(),
        columns: Vec::new(),
        cells: Vec::new(),
        summary: Vec::new(),
        charts: Vec::new(),
        agent_metrics: Vec::new(),
        by_agent: None,
        details: None,
    };
    match family {
        Family::Resources => resources(services, tenant_id, &filter, &mut view).await?,
        Family::ScriptErrors => script_errors(services, tenant_id, &filter, &mut view).await?,
        _ => aggregations(services, tenant_id, family, query, &filter, &mut view).await?,
    }
    if family == Family::Agents && view.by_agent.is_none() {
        presence_timeline(services, tenant_id, &filter, tz, &mut view).await?;
    }
    view.period = match (view.labels.first(), view.labels.last()) {
        (Some(first), Some(last)) if first != last => format!("{first} – {last} ({})", tz.name()),
        (Some(only), _) => format!("{only} ({})", tz.name()),
        _ => String::new(),
    };
    Ok(view)
}

/// The metric shown per agent, if the query asks for one this family has.
fn agent_metric(family: Family, query: &ReportQuery) -> Option<&'static MetricDef> {
    reports_of(family)
        .iter()
        .flat_map(|r| metrics_of(*r))
        .filter(|d| d.group_by.iter().any(|g| g.name == "AGENT"))
        .find(|d| key_of(d, family) == query.by_agent)
}

async fn aggregations(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    family: Family,
    query: &ReportQuery,
    filter: &DateFilter,
    view: &mut ReportView,
) -> CoreResult<()> {
    view.agent_metrics = reports_of(family)
        .iter()
        .flat_map(|r| metrics_of(*r))
        .filter(|d| d.group_by.iter().any(|g| g.name == "AGENT"))
        .map(|d| (key_of(d, family), label_of(d, family)))
        .collect();
    if let Some(def) = agent_metric(family, query) {
        return per_agent(services, tenant_id, family, def, filter, view).await;
    }
    let mut answers: Vec<(&'static MetricDef, AggregationResponse)> = Vec::new();
    for report in reports_of(family) {
        let defs: Vec<&'static MetricDef> = metrics_of(*report).collect();
        let request = request_for(&defs, None, filter);
        let answer = services
            .aggregate_report(tenant_id, *report, &request, Strategy::Rollups)
            .await?;
        let totals = services
            .report_totals(tenant_id, *report, &request, Strategy::Rollups)
            .await?;
        for (def, total) in defs.iter().zip(totals) {
            view.summary.push(summary(
                label_of(def, family),
                def.unit.as_str(),
                total.current,
                total.previous,
            ));
            answers.push((def, answer.clone()));
        }
    }
    view.labels = answers
        .first()
        .map(|(_, a)| a.results.keys().cloned().collect())
        .unwrap_or_default();
    view.columns = answers
        .iter()
        .map(|(def, _)| Column {
            key: key_of(def, family),
            label: label_of(def, family),
            unit: def.unit.as_str().to_string(),
        })
        .collect();
    view.cells = view
        .labels
        .iter()
        .map(|label| {
            answers
                .iter()
                .map(|(def, a)| {
                    a.results
                        .get(label)
                        .and_then(|b| b.get(def.name))
                        .cloned()
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect();
    // One chart per unit, so each axis means one thing.
    let mut units: Vec<&str> = view.columns.iter().map(|c| c.unit.as_str()).collect();
    units.dedup();
    units.sort_unstable();
    units.dedup();
    for unit in units {
        let series: Vec<Series> = view
            .columns
            .iter()
            .enumerate()
            .filter(|(_, c)| c.unit == unit)
            .map(|(i, c)| {
                (
                    c.label.clone(),
                    view.cells.iter().map(|row| number(row.get(i))).collect(),
                )
            })
            .collect();
        view.charts.push(chart(
            format!("{} over time ({unit})", family.title()),
            ChartSpec::Lines {
                labels: view.labels.clone(),
                series,
                y_desc: unit.to_string(),
            },
        ));
    }
    Ok(())
}

fn request_for(defs: &[&MetricDef], group_by: Option<&str>, filter: &DateFilter) -> ReportRequest {
    ReportRequest {
        metrics: defs
            .iter()
            .map(|d| MetricEntry {
                metric_name: d.name.to_string(),
                group_by: group_by.map(str::to_string),
                ..Default::default()
            })
            .collect(),
        date_filter: filter.clone(),
    }
}

fn summary(label: String, unit: &str, current: Option<String>, previous: Option<String>) -> Summary {
    let change = match (current.as_deref(), previous.as_deref()) {
        (Some(c), Some(p)) => match (c.parse::<f64>(), p.parse::<f64>()) {
            (Ok(c), Ok(p)) if p != 0.0 => Some(((c - p) / p * 1000.0).round() / 10.0),
            _ => None,
        },
        _ => None,
    };
    Summary {
        label,
        unit: unit.to_string(),
        current,
        previous,
        change,
    }
}

/// A chart of series, with a legend entry per series.
fn chart(title: String, spec: ChartSpec) -> Chart {
    let legend = match &spec {
        ChartSpec::Lines { series, .. } | ChartSpec::StackedBars { series, .. } => series
            .iter()
            .enumerate()
            .map(|(i, (label, _))| (label.clone(), charts::css_colour(i)))
            .collect(),
        ChartSpec::Timeline { .. } => vec![("Online".into(), charts::css_colour(2))],
    };
    Chart {
        title,
        height: charts::height(&spec),
        svg: charts::svg(&spec),
        spec,
        legend,
    }
}

#[cfg(test)]
mod tests {
    use super::sentence_case;

    #[test]
    fn metric_names_read_as_sentences_with_acronyms_kept() {
        assert_eq!(sentence_case("RESOURCE_LOADS"), "Resource loads");
        assert_eq!(sentence_case("CSAT_AVERAGE"), "CSAT average");
        assert_eq!(sentence_case("SLA_HIT_RATE"), "SLA hit rate");
    }
}
