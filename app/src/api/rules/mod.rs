//! Routing rules and SLA rules from the dashboard (admins): the same services as
//! `/rest/v1/rule/routing` and `/rest/v1/rule/sla`.
//!
//! The builder edits a [`RuleDraft`]: one flat shape per condition and action,
//! whichever variant is chosen, so that switching a variant keeps what was typed.
//! What the form submits is the rule in the REST API's JSON shape (field
//! `rule`), built by [`RuleDraft::to_api`]. Without JavaScript the page shows
//! that JSON in a text box instead of the builder, so the form still works; the
//! service's problems (`elseRules[0].actions[1].target.value`) name the same
//! paths either way.

mod drafts;
#[cfg(feature = "ssr")]
mod store;

pub(in crate::api) use drafts::{items, text};
pub use drafts::{ActionDraft, ConditionDraft, RuleDraft};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where routing rules are managed.
pub const ROUTING_RULES_PATH: &str = "/settings/routing-rules";
/// Where SLA rules are managed.
pub const SLA_RULES_PATH: &str = "/settings/sla-rules";
/// Where action rules are managed.
pub const ACTION_RULES_PATH: &str = "/settings/action-rules";

/// Condition variants: API `type`, label.
pub const CONDITION_TYPES: [(&str, &str); 5] = [
    ("HAS_TAG", "Customer has tags"),
    ("HAS_ID", "Customer is one of"),
    ("URL", "Started on a page"),
    ("OPENING_HOUR", "Opening hours"),
    ("NO_ANSWER", "No answer for"),
];

/// Action variants: API `type`, label.
pub const ACTION_TYPES: [(&str, &str); 4] = [
    ("QUEUE", "Queue for"),
    ("SYSTEM_MESSAGE", "Send a system message"),
    ("ROUTING_TO", "Continue with rule"),
    ("SEND_FLOW", "Send a flow"),
];

/// Which kind of rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RuleKind {
    /// Spec 2.9.
    Routing,
    /// Spec 2.10.
    Sla,
    /// The visitor's side: when the chat shows, and proactive chats.
    Action,
}

impl RuleKind {
    /// The list page.
    pub fn path(self) -> &'static str {
        match self {
            RuleKind::Routing => ROUTING_RULES_PATH,
            RuleKind::Sla => SLA_RULES_PATH,
            RuleKind::Action => ACTION_RULES_PATH,
        }
    }
}

/// A rule in the list: id, name, whether applied, and matches in the last 30 days.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleSummary {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Routing: its priority (lower is tried first), if it has one.
    pub priority: Option<i64>,
    /// Applied.
    pub active: bool,
    /// Routing: channels; SLA: response times, in words.
    pub about: String,
    /// Matches over the last month (routing: rule matches; SLA: first-response matches).
    pub matches: i64,
}

/// A saved rule: its id and draft.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedRule {
    /// Id.
    pub id: String,
    /// The rule.
    pub draft: RuleDraft,
    /// Matches over the last month.
    pub matches: i64,
}

/// What rules can refer to, `(id, label)` each, by label.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleChoices {
    /// Users (queue targets, SLA receivers).
    pub users: Vec<(String, String)>,
    /// Teams (queue targets).
    pub teams: Vec<(String, String)>,
    /// Opening hours (conditions).
    pub opening_hours: Vec<(String, String)>,
    /// System messages (actions), labelled with their language.
    pub system_messages: Vec<(String, String)>,
    /// Routing rules (`ROUTING_TO`).
    pub routing_rules: Vec<(String, String)>,
    /// Flows (`SEND_FLOW`).
    pub flows: Vec<(String, String)>,
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// Every rule of a kind with its match count over the last month: routing
/// rules in the order they are tried, SLA rules by name.
#[server(endpoint = "list_rules")]
pub async fn list_rules(kind: RuleKind) -> Result<Vec<RuleSummary>, ServerFnError> {
    let (ctx, user) = admin().await?;
    store::list(&ctx.services, &user.tenant_id, kind)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// One rule with its match count.
#[server(endpoint = "get_rule")]
pub async fn get_rule(kind: RuleKind, id: String) -> Result<SavedRule, ServerFnError> {
    let (ctx, user) = admin().await?;
    store::get(&ctx.services, &user.tenant_id, kind, &id)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Creates (no `id`) or replaces a rule given in the REST API's JSON shape.
#[server(endpoint = "save_rule")]
pub async fn save_rule(kind: RuleKind, id: Option<String>, rule: String) -> Result<SavedRule, ServerFnError> {
    let (ctx, user) = admin().await?;
    let id = id.filter(|id| !id.is_empty());
    let created = id.is_none();
    let saved = store::save(
        &ctx.services,
        &user.tenant_id,
        kind,
        id,
        &rule,
        &crate::ssr::actor(&user),
    )
    .await
    .map_err(crate::ssr::to_server_error)?;
    if created {
        // A new rule gets its own address, so reloading or sharing the page
        // shows it rather than an empty builder.
        leptos_axum::redirect(&format!("{}/{}", kind.path(), saved.id));
    }
    Ok(saved)
}

/// Deletes a rule, then shows the list.
#[server(endpoint = "remove_rule")]
pub async fn remove_rule(kind: RuleKind, id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    let actor = crate::ssr::actor(&user);
    match kind {
        RuleKind::Routing => ctx.services.delete_routing_rule(&user.tenant_id, &id, &actor).await,
        RuleKind::Sla => ctx.services.delete_sla_rule(&user.tenant_id, &id, &actor).await,
        RuleKind::Action => ctx.services.delete_action_rule(&user.tenant_id, &id, &actor).await,
    }
    .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(kind.path());
    Ok(())
}

/// Moves a routing rule one place earlier (`direction` `up`) or later (`down`)
/// in the order rules are tried. Answers the id of the button pressed
/// (`move-<id>-<direction>`), which the list focuses again once redrawn.
#[server(endpoint = "move_rule")]
pub async fn move_rule(id: String, direction: String) -> Result<String, ServerFnError> {
    let (ctx, user) = admin().await?;
    let up = match direction.as_str() {
        "up" => true,
        "down" => false,
        _ => {
            return Err(crate::ssr::to_server_error(rapport_core::CoreError::invalid(
                "direction",
                "invalid_value",
                "direction is up or down",
            )))
        }
    };
    ctx.services
        .move_routing_rule(&user.tenant_id, &id, up, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(format!("move-{id}-{direction}"))
}

/// A routing rule's recent matches, newest first.
#[server(endpoint = "rule_matches")]
pub async fn rule_matches(id: String) -> Result<Vec<crate::api::routing_log::RoutingLine>, ServerFnError> {
    use crate::api::routing_log::{server::lines, RULE_MATCHES_SHOWN};
    let (ctx, user) = admin().await?;
    let services = &ctx.services;
    let tenant = &user.tenant_id;
    async {
        // Another tenant's rule is as unknown as a missing one.
        services
            .config_get::<rapport_core::config::rules::RoutingRule>(tenant, &id)
            .await?;
        let records = services.routing_log_of_rule(tenant, &id, RULE_MATCHES_SHOWN).await?;
        lines(services, tenant, records, true).await
    }
    .await
    .map_err(crate::ssr::to_server_error)
}

/// What the builder's pickers offer.
#[server(endpoint = "rule_references")]
pub async fn rule_references() -> Result<RuleChoices, ServerFnError> {
    let (ctx, user) = admin().await?;
    store::references(&ctx.services, &user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)
}
