//! Routing rules (spec 2.9) and SLA rules (spec 2.10); action rules, the third
//! kind, are in [`action`].
//!
//! The spec names the five condition and four action variants but not their
//! fields; these are ours, each variant tagged by a string `type`:
//!
//! | Variant | `type` | Fields |
//! |---|---|---|
//! | HAS_ID | `HAS_ID` | `ids`: customer ids or external ids |
//! | HasTag | `HAS_TAG` | `tags`, `match` `ANY` (default) or `ALL`, `source` `ANY` (default), `TRUSTED` or `PAGE` |
//! | NoAnswer | `NO_ANSWER` | `seconds` without an agent's answer (1–86400) |
//! | OpeningHour | `OPENING_HOUR` | `openingHoursId`, `inside` (default true) |
//! | UrlRouting | `URL` | `urls`: patterns, `*` matches any run of characters |
//! | QueueRoutingAction | `QUEUE` | `target` `{type: USER, TEAM or TAG, value}`, `agentState` `AVAILABLE`, `ONLINE` or `ANY` (default), `maxWaitSeconds` (1–5400, default 5400: the product's 1 h 30 min) |
//! | RoutingToRoutingAction | `ROUTING_TO` | `ruleId` of another routing rule |
//! | SendFlowRoutingAction | `SEND_FLOW` | `flowId` of a flow (`/flow`) |
//! | SystemMessageRoutingAction | `SYSTEM_MESSAGE` | `systemMessageId` |
//!
//! References must exist in the tenant, and `ROUTING_TO` may not close a cycle.
//! `elseRules` are nested rules (at most 5 levels) tried when the rule does not match.
//! The order routing rules are tried in (`priority`) is edited as a whole in [`order`].

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::{
    flows::Flow, opening_hours::OpeningHours, system_messages::SystemMessage, watchdogs::WatchdogReceiver, ConfigKind,
    Meta,
};
use crate::{audit::Actor, error::CoreResult, ids::TenantId, validate::Checks, Services};

pub mod action;
mod checks;
mod conditions;
pub mod order;

use checks::*;
pub use conditions::{Condition, TagMatch, TagSource};

/// Deepest nesting of `elseRules`.
pub const MAX_ELSE_DEPTH: usize = 5;

/// What a matching routing rule does.
// Fields are camelCase per variant, as in `Condition`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum Action {
    /// Queue the customer for a user, a team or anyone with a tag.
    #[serde(rename = "QUEUE", rename_all = "camelCase")]
    Queue {
        /// Who may take the conversation.
        target: QueueTarget,
        /// Required state of the target agents.
        #[serde(default)]
        agent_state: AgentState,
        /// Longest wait in the queue, seconds (1–5400).
        #[serde(default = "max_wait")]
        #[schema(minimum = 1, maximum = 5400)]
        max_wait_seconds: i64,
    },
    /// Continue with another routing rule.
    #[serde(rename = "ROUTING_TO", rename_all = "camelCase")]
    RoutingTo {
        /// Id of a routing rule of the tenant; the rule may not route back to itself.
        rule_id: String,
    },
    /// Send a flow to the customer.
    #[serde(rename = "SEND_FLOW", rename_all = "camelCase")]
    SendFlow {
        /// Id of a flow of the tenant (`/flow`).
        flow_id: String,
    },
    /// Send a system message to the customer.
    #[serde(rename = "SYSTEM_MESSAGE", rename_all = "camelCase")]
    SystemMessage {
        /// Id of a system message of the tenant.
        system_message_id: String,
    },
}

fn max_wait() -> i64 {
    5400
}

/// Target of a queue action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct QueueTarget {
    /// `USER`, `TEAM` or `TAG`.
    #[serde(rename = "type")]
    pub kind: QueueTargetType,
    /// A user id, a team id, or a tag.
    pub value: String,
}

impl QueueTarget {
    /// A `TAG` target's value is a tag (1–64 characters), as a JSON Schema condition;
    /// a `USER` or `TEAM` target names an id of the tenant, which no schema can say.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{
            "if": {"properties": {"type": {"const": "TAG"}}},
            "then": {"properties": {"value": {"minLength": 1, "maxLength": 64, "pattern": "\\S"}}},
        }])
    }
}

/// Kinds of queue target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum QueueTargetType {
    /// One user.
    User,
    /// The members of a team.
    Team,
    /// Users with a tag (skill), their own or one of a team they are in.
    Tag,
}

/// Agent state a queue requires.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AgentState {
    /// Online and not in a conversation.
    Available,
    /// Online.
    Online,
    /// Any state.
    #[default]
    Any,
}

/// Channels a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Channel {
    /// Web chat.
    Chat,
    /// Calls.
    Call,
}

/// A routing rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "VIP shop visitors", "types": ["CHAT"], "conditions": [{"type": "URL", "urls": ["https://shop.example.com/*"]}, {"type": "HAS_TAG", "tags": ["vip"]}], "actions": [{"type": "QUEUE", "target": {"type": "TEAM", "value": "0196f0c2-7a1e-7c3a-9a51-2f6f5a0b1c2d"}, "agentState": "AVAILABLE", "maxWaitSeconds": 600}], "elseRules": [{"name": "Everyone else", "types": ["CHAT"], "actions": [{"type": "QUEUE", "target": {"type": "TAG", "value": "support"}}]}]}))]
pub struct RoutingRule {
    /// Id and timestamps (not used on nested else-rules).
    #[serde(flatten)]
    pub meta: Meta,
    /// Name (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// Whether the rule is applied; default true. A rule or else-rule that is
    /// not is never tried, nor are the else-rules under it.
    pub active: Option<bool>,
    /// Where the rule stands in the order rules are tried: lower first (0–1000000),
    /// ties by name. A new rule without one goes last. Not used on else-rules, which
    /// are tried in their list's order. Our extension.
    #[schema(minimum = 0, maximum = 1000000)]
    pub priority: Option<i64>,
    /// Conditions, all of which must hold (at most 50).
    #[serde(default)]
    #[schema(max_items = 50)]
    pub conditions: Vec<Condition>,
    /// Channels: unique values of `CHAT`, `CALL` (at least one).
    #[serde(default)]
    #[schema(required = true, min_items = 1, max_items = 2)]
    pub types: Vec<Channel>,
    /// Rules tried when this one does not match (at most 10; nested at most 5 levels).
    #[serde(default)]
    #[schema(no_recursion, max_items = 10)]
    pub else_rules: Vec<RoutingRule>,
    /// Actions when it matches (1–20).
    #[serde(default)]
    #[schema(required = true, min_items = 1, max_items = 20)]
    pub actions: Vec<Action>,
}

/// SLA response times, in seconds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SlaTrigger {
    /// Time to answer the first message of a conversation (1–604800).
    #[schema(minimum = 1, maximum = 604800)]
    pub first_response_seconds: i64,
    /// Time to answer each later customer message (1–604800).
    #[schema(minimum = 1, maximum = 604800)]
    pub second_response_seconds: i64,
}

/// An SLA rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "VIP response", "conditions": [{"type": "HAS_TAG", "tags": ["vip"]}], "trigger": {"firstResponseSeconds": 60, "secondResponseSeconds": 300}, "receivers": [{"type": "EMAIL", "value": "lead@example.com"}], "watchdogEnabled": true}))]
pub struct SlaRule {
    /// Id and timestamps.
    #[serde(flatten)]
    pub meta: Meta,
    /// Name (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// Whether the rule is applied; default true.
    pub active: Option<bool>,
    /// Conditions, all of which must hold (at most 50).
    #[serde(default)]
    #[schema(max_items = 50)]
    pub conditions: Vec<Condition>,
    /// Response times (required).
    #[schema(required = true, nullable = false)]
    pub trigger: Option<SlaTrigger>,
    /// Who is told when no target is matched (unique, at most 50).
    #[serde(default)]
    #[schema(max_items = 50)]
    pub receivers: Vec<WatchdogReceiver>,
    /// Whether misses alert the receivers.
    pub watchdog_enabled: Option<bool>,
}

impl ConfigKind for RoutingRule {
    const KIND: &'static str = "routingrule";
    const LABEL: &'static str = "routing rule";
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_default()
    }
}

impl ConfigKind for SlaRule {
    const KIND: &'static str = "slarule";
    const LABEL: &'static str = "SLA rule";
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_default()
    }
}

impl RoutingRule {
    fn walk<'a>(&'a self, out: &mut Vec<&'a RoutingRule>) {
        out.push(self);
        for r in &self.else_rules {
            r.walk(out);
        }
    }

    fn all_levels(&self) -> Vec<&RoutingRule> {
        let mut out = Vec::new();
        self.walk(&mut out);
        out
    }

    /// Routing rules this one (or its else-rules) continues with.
    pub fn routed_rule_ids(&self) -> Vec<String> {
        self.all_levels()
            .iter()
            .flat_map(|r| r.actions.iter())
            .filter_map(|a| match a {
                Action::RoutingTo { rule_id } => Some(rule_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// Opening hours this rule refers to.
    pub fn opening_hours_ids(&self) -> Vec<String> {
        self.all_levels()
            .iter()
            .flat_map(|r| opening_hours_in(&r.conditions))
            .collect()
    }

    /// Every condition of the rule and its else-rules.
    pub fn all_conditions(&self) -> Vec<&Condition> {
        self.all_levels()
            .into_iter()
            .flat_map(|r| r.conditions.iter())
            .collect()
    }

    /// The `seconds` of the rule's (and its else-rules') `NO_ANSWER` conditions.
    pub fn no_answer_seconds(&self) -> Vec<i64> {
        self.all_conditions()
            .into_iter()
            .filter_map(|c| match c {
                Condition::NoAnswer { seconds } => Some(*seconds),
                _ => None,
            })
            .collect()
    }

    /// Flows this rule (or its else-rules) sends.
    pub fn flow_ids(&self) -> Vec<String> {
        self.all_levels()
            .iter()
            .flat_map(|r| r.actions.iter())
            .filter_map(|a| match a {
                Action::SendFlow { flow_id } => Some(flow_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// System messages this rule sends.
    pub fn system_message_ids(&self) -> Vec<String> {
        self.all_levels()
            .iter()
            .flat_map(|r| r.actions.iter())
            .filter_map(|a| match a {
                Action::SystemMessage { system_message_id } => Some(system_message_id.clone()),
                _ => None,
            })
            .collect()
    }
}

impl SlaRule {
    /// Opening hours this rule refers to.
    pub fn opening_hours_ids(&self) -> Vec<String> {
        opening_hours_in(&self.conditions)
    }
}

fn opening_hours_in(conditions: &[Condition]) -> Vec<String> {
    conditions
        .iter()
        .filter_map(|c| match c {
            Condition::OpeningHour { opening_hours_id, .. } => Some(opening_hours_id.clone()),
            _ => None,
        })
        .collect()
}

impl Services {
    /// Creates or overrides a routing rule.
    pub async fn save_routing_rule(
        &self,
        tenant_id: &TenantId,
        mut input: RoutingRule,
        actor: &Actor,
    ) -> CoreResult<RoutingRule> {
        let mut checks = Checks::new();
        let mut refs = References::default();
        check_rule(&mut checks, "", &mut input, 0, &mut refs);
        if input.active.is_none() {
            input.active = Some(true);
        }
        self.resolve_references(tenant_id, &mut checks, refs).await?;
        if input.priority.is_none() {
            input.priority = Some(self.routing_rule_priority(tenant_id, input.meta.id.as_deref()).await?);
        }
        if checks.is_clean() {
            if let Some(id) = input.meta.id.clone() {
                let mut edges: HashMap<String, Vec<String>> = self
                    .config_all::<RoutingRule>(tenant_id)
                    .await?
                    .into_iter()
                    .filter_map(|r| r.meta.id.clone().map(|rid| (rid, r.routed_rule_ids())))
                    .collect();
                edges.insert(id.clone(), input.routed_rule_ids());
                if closes_cycle(&id, &edges) {
                    checks.push(
                        "actions",
                        "routing_cycle",
                        "ROUTING_TO actions would route in a circle back to this rule",
                    );
                }
            }
        }
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }

    /// The priority a rule saved without one gets: the one it has when it exists
    /// already, otherwise after every other rule.
    async fn routing_rule_priority(&self, tenant_id: &TenantId, id: Option<&str>) -> CoreResult<i64> {
        let rules = self.config_all::<RoutingRule>(tenant_id).await?;
        if let Some(existing) = id.and_then(|id| rules.iter().find(|r| r.meta.id.as_deref() == Some(id))) {
            if let Some(p) = existing.priority {
                return Ok(p);
            }
        }
        Ok(rules
            .iter()
            .filter_map(|r| r.priority)
            .max()
            .map_or(0, |p| (p + 10).min(1_000_000)))
    }

    /// The tenant's active routing rules in the order they are tried: by priority,
    /// then name (rules without a priority, stored before priorities existed, last).
    pub async fn routing_rules_in_order(&self, tenant_id: &TenantId) -> CoreResult<Vec<RoutingRule>> {
        let mut rules: Vec<RoutingRule> = self
            .config_all::<RoutingRule>(tenant_id)
            .await?
            .into_iter()
            .filter(|r| r.active != Some(false))
            .collect();
        // `config_all` returns them by name, and the sort is stable.
        rules.sort_by_key(|r| r.priority.unwrap_or(i64::MAX));
        Ok(rules)
    }

    /// [`Services::routing_rules_in_order`], read inside `tx`.
    pub(crate) async fn routing_rules_in_order_in(
        tx: &mut crate::db::Tx,
        tenant_id: &TenantId,
    ) -> CoreResult<Vec<RoutingRule>> {
        let mut rules: Vec<RoutingRule> = Services::config_all_in::<RoutingRule>(tx, tenant_id)
            .await?
            .into_iter()
            .filter(|r| r.active != Some(false))
            .collect();
        rules.sort_by_key(|r| r.priority.unwrap_or(i64::MAX));
        Ok(rules)
    }

    /// Creates or overrides an SLA rule.
    pub async fn save_sla_rule(&self, tenant_id: &TenantId, mut input: SlaRule, actor: &Actor) -> CoreResult<SlaRule> {
        let mut checks = Checks::new();
        let mut refs = References::default();
        input.name = Some(checks.required_text("name", input.name.as_deref(), 200));
        if input.active.is_none() {
            input.active = Some(true);
        }
        if input.watchdog_enabled.is_none() {
            input.watchdog_enabled = Some(false);
        }
        check_conditions(&mut checks, "conditions", &input.conditions, &mut refs);
        match &input.trigger {
            None => checks.push("trigger", "required", "trigger is required"),
            Some(t) => {
                checks.in_range("trigger.firstResponseSeconds", t.first_response_seconds, 1..=604_800);
                checks.in_range("trigger.secondResponseSeconds", t.second_response_seconds, 1..=604_800);
            }
        }
        self.check_receivers(tenant_id, &mut checks, "receivers", &input.receivers)
            .await?;
        self.resolve_references(tenant_id, &mut checks, refs).await?;
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }

    /// Deletes an SLA rule.
    pub async fn delete_sla_rule(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        self.config_delete::<SlaRule>(tenant_id, id, actor).await
    }
}

#[cfg(test)]
mod tests;
