//! The CSV download of a report page: the same file `?format=csv` gives on the
//! REST operation, for the page's own query.

use rapport_core::{
    error::CoreResult,
    reports::{
        api::{AggregationResponse, ResourceFilter, ScriptErrorFilter},
        catalogue::MetricDef,
        csv,
        query::Strategy,
    },
    Services,
};

use super::{agent_metric, date_filter, key_of, metrics_of, reports_of, request_for};
use crate::api::reports::view::{Family, ReportQuery};

/// The CSV of a page's query, exactly as `?format=csv` on the REST operation:
/// (file name, body).
pub async fn csv(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    query: &ReportQuery,
) -> CoreResult<(String, String)> {
    let family = Family::from_slug(&query.family).ok_or(rapport_core::CoreError::NotFound("report"))?;
    let tenant = services.get_tenant(tenant_id).await?;
    let filter = date_filter(query, tenant.timezone.parse().unwrap_or(chrono_tz::UTC))?;
    let name = format!(
        "rapport-{}-{}.csv",
        family.slug(),
        filter.grouping.as_str().to_lowercase()
    );
    let body = match family {
        Family::Resources => {
            let request = ResourceFilter {
                date_filter: filter,
                ..Default::default()
            };
            csv::resources(&services.resource_report(tenant_id, &request, Strategy::Rollups).await?)
        }
        Family::ScriptErrors => {
            let request = ScriptErrorFilter {
                date_filter: filter,
                ..Default::default()
            };
            csv::script_errors(
                &services
                    .script_error_report(tenant_id, &request, Strategy::Rollups)
                    .await?,
            )
        }
        _ => {
            if let Some(def) = agent_metric(family, query) {
                let request = request_for(&[def], Some("AGENT"), &filter);
                csv::aggregation(
                    &services
                        .aggregate_report(tenant_id, def.report, &request, Strategy::Rollups)
                        .await?,
                )
            } else {
                let mut merged = AggregationResponse::default();
                for report in reports_of(family) {
                    let defs: Vec<&'static MetricDef> = metrics_of(*report).collect();
                    let answer = services
                        .aggregate_report(
                            tenant_id,
                            *report,
                            &request_for(&defs, None, &filter),
                            Strategy::Rollups,
                        )
                        .await?;
                    for (label, values) in answer.results {
                        let bucket = merged.results.entry(label).or_default();
                        for (metric, value) in values {
                            let def = defs.iter().find(|d| d.name == metric);
                            let key = def.map_or(metric.clone(), |d| key_of(d, family));
                            bucket.insert(key, value);
                        }
                    }
                }
                csv::aggregation(&merged)
            }
        }
    };
    Ok((name, body))
}
