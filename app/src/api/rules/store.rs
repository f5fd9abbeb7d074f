//! The server side of the rule pages (see [`super`]): reading and saving
//! routing, SLA and action rules through the core services, their match counts from the
//! rule report, and what the builder's pickers offer.

use rapport_core::{
    audit::Actor,
    config::{
        flows::Flow,
        opening_hours::OpeningHours,
        rules::{action::ActionRule, RoutingRule, SlaRule},
        system_messages::SystemMessage,
        ConfigKind,
    },
    error::{CoreError, CoreResult},
    model::PageRequest,
    reports::{
        api::{DateFilter, Grouping, MetricEntry, ReportRequest},
        catalogue::Report,
        query::Strategy,
    },
    Services,
};
use serde_json::Value;

use super::{RuleChoices, RuleDraft, RuleKind, RuleSummary, SavedRule};

/// The metric that counts a kind of rule's matches.
fn match_metric(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Routing => "ROUTING_RULE_MATCH_COUNT",
        RuleKind::Sla => "SLA_1_RULE_MATCH_COUNT",
        RuleKind::Action => "ACTION_RULE_MATCH_COUNT",
    }
}

/// Matches per rule id over the last month, from the rule report: of every
/// rule, or of `only` that one.
async fn match_counts(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    kind: RuleKind,
    only: Option<&str>,
) -> CoreResult<std::collections::HashMap<String, i64>> {
    let request = ReportRequest {
        metrics: vec![MetricEntry {
            metric_name: match_metric(kind).into(),
            group_by: Some("RULE".into()),
            rule_ids: only.map(|id| vec![id.to_string()]),
            ..Default::default()
        }],
        date_filter: DateFilter {
            grouping: Grouping::LastMonth,
            ..Default::default()
        },
    };
    let report = services
        .aggregate_report(tenant_id, Report::Rule, &request, Strategy::Rollups)
        .await?;
    let mut counts = std::collections::HashMap::new();
    for by_rule in report.results.into_values() {
        for (rule, value) in by_rule {
            *counts.entry(rule).or_default() += value.parse::<i64>().unwrap_or_default();
        }
    }
    Ok(counts)
}

/// A stored rule in the REST API's shape, without its id and timestamps.
fn api_value<K: serde::Serialize>(rule: &K) -> Value {
    let mut value = serde_json::to_value(rule).unwrap_or(Value::Null);
    if let Some(map) = value.as_object_mut() {
        for key in ["id", "createdAt", "updatedAt"] {
            map.remove(key);
        }
    }
    value
}

fn summary_about(draft: &RuleDraft, kind: RuleKind) -> String {
    match kind {
        RuleKind::Routing => {
            let mut about = draft.types.join(", ");
            if !draft.else_rules.is_empty() {
                about.push_str(&format!(" · {} else-rule(s)", draft.else_rules.len()));
            }
            about
        }
        RuleKind::Sla => format!(
            "first answer {} s, then {} s",
            draft.first_response_seconds, draft.second_response_seconds
        ),
        RuleKind::Action => draft.action_summary(),
    }
}

async fn all_drafts(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    kind: RuleKind,
) -> CoreResult<Vec<(String, RuleDraft)>> {
    fn drafts<K: ConfigKind>(all: Vec<K>) -> Vec<(String, RuleDraft)> {
        all.into_iter()
            .map(|r| {
                (
                    r.meta().id.clone().unwrap_or_default(),
                    RuleDraft::from_api(&api_value(&r)),
                )
            })
            .collect()
    }
    Ok(match kind {
        RuleKind::Routing => drafts(services.config_all::<RoutingRule>(tenant_id).await?),
        RuleKind::Sla => drafts(services.config_all::<SlaRule>(tenant_id).await?),
        RuleKind::Action => drafts(services.config_all::<ActionRule>(tenant_id).await?),
    })
}

/// Every rule of a kind with its matches over the last month: routing rules in
/// the order they are tried (as the engine sorts them), SLA rules by name.
pub(crate) async fn list(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    kind: RuleKind,
) -> CoreResult<Vec<RuleSummary>> {
    let counts = match_counts(services, tenant_id, kind, None).await?;
    let mut list: Vec<RuleSummary> = all_drafts(services, tenant_id, kind)
        .await?
        .into_iter()
        .map(|(id, draft)| RuleSummary {
            matches: counts.get(&id).copied().unwrap_or_default(),
            about: summary_about(&draft, kind),
            priority: draft.priority,
            name: draft.name,
            active: draft.active,
            id,
        })
        .collect();
    match kind {
        // `all_drafts` reads them in the engine's name order; the sort is stable.
        RuleKind::Routing => list.sort_by_key(|r| r.priority.unwrap_or(i64::MAX)),
        // Action rules run in the order of their names, as the script gets them.
        RuleKind::Sla | RuleKind::Action => list.sort_by_key(|r| r.name.to_lowercase()),
    }
    Ok(list)
}

/// One rule with its matches over the last month.
pub(crate) async fn get(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    kind: RuleKind,
    id: &str,
) -> CoreResult<SavedRule> {
    let value = match kind {
        RuleKind::Routing => api_value(&services.config_get::<RoutingRule>(tenant_id, id).await?),
        RuleKind::Sla => api_value(&services.config_get::<SlaRule>(tenant_id, id).await?),
        RuleKind::Action => api_value(&services.config_get::<ActionRule>(tenant_id, id).await?),
    };
    let counts = match_counts(services, tenant_id, kind, Some(id)).await?;
    Ok(SavedRule {
        id: id.to_string(),
        draft: RuleDraft::from_api(&value),
        matches: counts.get(id).copied().unwrap_or_default(),
    })
}

/// Reads the posted JSON as a rule, or names the field `rule` with serde's reason.
fn parse<K: serde::de::DeserializeOwned>(json: &str) -> CoreResult<K> {
    serde_json::from_str(json).map_err(|e| {
        CoreError::invalid(
            "rule",
            "invalid_json",
            format!("the rule is not valid JSON in the API's shape: {e}"),
        )
    })
}

/// Creates (no `id`) or replaces a rule posted in the REST API's shape.
pub(crate) async fn save(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    kind: RuleKind,
    id: Option<String>,
    json: &str,
    actor: &Actor,
) -> CoreResult<SavedRule> {
    let saved_id = match kind {
        RuleKind::Routing => {
            if let Some(id) = &id {
                // Another tenant's id gets the same 404 as an unknown one.
                services.config_get::<RoutingRule>(tenant_id, id).await?;
            }
            let mut rule: RoutingRule = parse(json)?;
            rule.meta.id = id;
            services.save_routing_rule(tenant_id, rule, actor).await?.meta.id
        }
        RuleKind::Sla => {
            if let Some(id) = &id {
                services.config_get::<SlaRule>(tenant_id, id).await?;
            }
            let mut rule: SlaRule = parse(json)?;
            rule.meta.id = id;
            services.save_sla_rule(tenant_id, rule, actor).await?.meta.id
        }
        RuleKind::Action => {
            if let Some(id) = &id {
                services.config_get::<ActionRule>(tenant_id, id).await?;
            }
            let mut rule: ActionRule = parse(json)?;
            rule.meta.id = id;
            services.save_action_rule(tenant_id, rule, actor).await?.meta.id
        }
    };
    get(services, tenant_id, kind, &saved_id.unwrap_or_default()).await
}

/// Every user, team, opening hours, system message, routing rule and flow of the tenant.
pub(crate) async fn references(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
) -> CoreResult<RuleChoices> {
    let mut refs = RuleChoices::default();
    for number in 0.. {
        let page = services
            .list_users(
                tenant_id,
                None,
                &PageRequest {
                    page_number: Some(number),
                    page_size: Some(PageRequest::MAX_PAGE_SIZE),
                    offset: None,
                },
            )
            .await?;
        let last = page.page.page_number + 1 >= page.page.total_pages;
        refs.users.extend(page.results.into_iter().map(|u| {
            let label = match u.display_name.filter(|n| !n.is_empty()) {
                Some(name) => format!("{name} · {}", u.email),
                None => u.email,
            };
            (u.id.into_string(), label)
        }));
        if last {
            break;
        }
    }
    refs.teams = crate::api::teams::all_team_names(services, tenant_id).await?;
    fn named<K: ConfigKind>(all: Vec<K>, label: impl Fn(&K) -> String) -> Vec<(String, String)> {
        all.iter()
            .map(|k| (k.meta().id.clone().unwrap_or_default(), label(k)))
            .collect()
    }
    refs.opening_hours = named(services.config_all::<OpeningHours>(tenant_id).await?, |o| {
        o.display_name()
    });
    refs.system_messages = named(services.config_all::<SystemMessage>(tenant_id).await?, |m| {
        let text = m.message.clone().unwrap_or_default();
        let short: String = text.chars().take(60).collect();
        let ellipsis = if short.len() < text.len() { "…" } else { "" };
        let language = m.language.clone().unwrap_or_default();
        match m.name.as_deref().filter(|n| !n.is_empty()) {
            // The name first: the customer gets its translation in their language.
            Some(name) => format!("{name} · [{language}] {short}{ellipsis}"),
            None => format!("[{language}] {short}{ellipsis}"),
        }
    });
    refs.routing_rules = named(services.config_all::<RoutingRule>(tenant_id).await?, |r| {
        r.display_name()
    });
    refs.flows = named(services.config_all::<Flow>(tenant_id).await?, |f| f.display_name());
    for list in [
        &mut refs.users,
        &mut refs.teams,
        &mut refs.opening_hours,
        &mut refs.system_messages,
        &mut refs.routing_rules,
        &mut refs.flows,
    ] {
        list.sort_by_key(|(_, label)| label.to_lowercase());
    }
    Ok(refs)
}
