//! The reports the visitor script feeds: page resources and script errors,
//! each as a table per bucket and a list of the worst.

use rapport_core::{
    error::CoreResult,
    reports::{
        api::{DateFilter, ResourceFilter, ScriptErrorFilter},
        query::Strategy,
    },
    Services,
};

use super::{chart, number, sentence_case};
use crate::api::reports::view::{ChartSpec, Column, DetailTable, ReportView, Series};

pub(super) async fn resources(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    filter: &DateFilter,
    view: &mut ReportView,
) -> CoreResult<()> {
    let request = ResourceFilter {
        date_filter: filter.clone(),
        ..Default::default()
    };
    let report = services.resource_report(tenant_id, &request, Strategy::Rollups).await?;
    bucket_table(
        view,
        &report.results,
        &["RESOURCE_LOADS", "RESOURCE_ERRORS", "AVG_RESOURCE_DURATION"],
    );
    view.details = Some(DetailTable {
        caption: "Most loaded resources".into(),
        headers: ["Resource", "Type", "Loads", "Average ms", "Slowest ms", "Errors"]
            .map(String::from)
            .to_vec(),
        rows: report
            .rows
            .iter()
            .take(50)
            .map(|r| {
                vec![
                    r.resource_name.clone(),
                    r.kind.clone(),
                    r.count.to_string(),
                    r.avg_duration_ms.to_string(),
                    r.max_duration_ms.to_string(),
                    r.error_count.to_string(),
                ]
            })
            .collect(),
    });
    Ok(())
}

pub(super) async fn script_errors(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    filter: &DateFilter,
    view: &mut ReportView,
) -> CoreResult<()> {
    let request = ScriptErrorFilter {
        date_filter: filter.clone(),
        ..Default::default()
    };
    let report = services
        .script_error_report(tenant_id, &request, Strategy::Rollups)
        .await?;
    bucket_table(view, &report.results, &["SCRIPT_ERRORS", "AFFECTED_VISITORS"]);
    view.details = Some(DetailTable {
        caption: "Most frequent errors".into(),
        headers: [
            "Message",
            "File",
            "Line",
            "Count",
            "Visitors",
            "Last seen",
            "Top of the stack",
        ]
        .map(String::from)
        .to_vec(),
        rows: report
            .errors
            .iter()
            .take(50)
            .map(|e| {
                vec![
                    e.message.clone(),
                    e.file_name.clone().unwrap_or_default(),
                    e.line.map(|l| l.to_string()).unwrap_or_default(),
                    e.count.to_string(),
                    e.visitors.to_string(),
                    e.last_seen.format("%Y-%m-%d %H:%M UTC").to_string(),
                    e.stack.as_deref().map(top_frames).unwrap_or_default(),
                ]
            })
            .collect(),
    });
    Ok(())
}

/// The innermost frames of a stack trace, for a table cell: its first two
/// `at …` (Chromium) or `name@…` (Firefox, Safari) lines, innermost first.
fn top_frames(stack: &str) -> String {
    stack
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("at ") || l.contains('@'))
        .take(2)
        .collect::<Vec<_>>()
        .join(" ← ")
}

/// Table, totals and chart of a search report's per-bucket results.
fn bucket_table(
    view: &mut ReportView,
    results: &std::collections::BTreeMap<String, std::collections::BTreeMap<String, String>>,
    keys: &[&str],
) {
    view.labels = results.keys().cloned().collect();
    view.columns = keys
        .iter()
        .map(|k| Column {
            key: k.to_string(),
            label: sentence_case(k),
            unit: if k.starts_with("AVG") { "ms" } else { "count" }.to_string(),
        })
        .collect();
    view.cells = results
        .values()
        .map(|b| keys.iter().map(|k| b.get(*k).cloned().unwrap_or_default()).collect())
        .collect();
    let series: Vec<Series> = view
        .columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c.unit == "count")
        .map(|(i, c)| {
            (
                c.label.clone(),
                view.cells.iter().map(|row| number(row.get(i))).collect(),
            )
        })
        .collect();
    view.charts.push(chart(
        format!("{} over time", view.family.title()),
        ChartSpec::Lines {
            labels: view.labels.clone(),
            series,
            y_desc: "count".into(),
        },
    ));
}

#[cfg(test)]
mod tests {
    use super::top_frames;

    #[test]
    fn the_top_of_a_stack_is_its_innermost_frames() {
        let chromium = "TypeError: x is undefined\n    at add (https://shop.test/cart.js:12:5)\n    at https://shop.test/cart.js:40:3\n    at main (https://shop.test/app.js:1:1)";
        assert_eq!(
            top_frames(chromium),
            "at add (https://shop.test/cart.js:12:5) ← at https://shop.test/cart.js:40:3"
        );
        assert_eq!(
            top_frames("add@https://shop.test/cart.js:12:5"),
            "add@https://shop.test/cart.js:12:5"
        );
        assert_eq!(top_frames("no frames here"), "");
    }
}
