//! Validating a report request against the catalogue: which metric, which rollup
//! group, which filters. Everything wrong is named at its field in one 422.

use super::{
    api::{MetricEntry, ReportRequest, TagsFilter},
    catalogue::{self, Filters, MetricDef, Report},
};
use crate::{error::CoreResult, validate::Checks};

/// Most metrics in one request.
const MAX_METRICS: usize = 20;

/// A metric entry after validation.
#[derive(Debug, Clone)]
pub(crate) struct Query {
    pub def: &'static MetricDef,
    /// Rollup group kind: `""` (total), `AGENT`, `DIM`.
    pub group_kind: &'static str,
    /// Whether agent keys are answered as e-mail addresses (`AGENT_EMAIL`).
    pub keyed_by_email: bool,
    pub filter: Filter,
}

/// The filters of a metric entry that the engine applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Filter {
    pub tags: TagsFilter,
    pub visitor_ids: Vec<String>,
    pub external_ids: Vec<String>,
    pub base_url: Option<String>,
    pub rule_ids: Vec<String>,
}

impl Filter {
    /// Whether rollups hold what this filter needs (rule ids are the DIM key).
    pub fn rollup_compatible(&self) -> bool {
        self.tags.is_empty() && self.visitor_ids.is_empty() && self.external_ids.is_empty() && self.base_url.is_none()
    }

    /// Whether nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.rollup_compatible() && self.rule_ids.is_empty()
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
pub(crate) fn plan(report: Report, request: &ReportRequest) -> CoreResult<Vec<Query>> {
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
            keyed_by_email: group_by == Some("AGENT_EMAIL"),
            filter,
        });
    }
    checks.finish()?;
    Ok(queries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

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
