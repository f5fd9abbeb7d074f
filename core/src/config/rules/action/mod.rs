//! Action rules: when the visitor's chat is shown, and when it starts a
//! conversation. The product's third kind of rule, beside routing and SLA
//! rules (product notes §5); the spec counts their matches as
//! `ACTION_RULE_MATCH_COUNT`.
//!
//! A rule runs when a page opens (`PAGE`) or when the visitor opens the chat
//! (`CHAT`); when all its conditions hold (each may be negated) it takes its
//! one action. Rules are evaluated in the visitor's browser, so that a page
//! view costs the server nothing: [`Services::compiled_action_rules`] turns the
//! tenant's active rules into what the script needs (opening hours and time
//! windows become UTC intervals, a flow its messages), which the script caches
//! and evaluates, and reports each match in its tracking batches
//! (`ACTION_RULE_MATCH`, `reports::ingest`). A proactive message is only shown
//! by the script; it joins the conversation when the visitor answers
//! ([`Services::action_rule_greeting`]).

use chrono_tz::Tz;
use serde::{Deserialize, Serialize};

use super::{checks::non_empty_strings, TagMatch};
use crate::{
    audit::Actor,
    config::{
        opening_hours::{TimeOfDay, Weekday},
        ConfigKind, Meta,
    },
    error::{CoreError, CoreResult},
    ids::TenantId,
    validate::Checks,
    Services,
};

mod compile;

pub use compile::{
    schedule_intervals, window_intervals, CompiledAction, CompiledCondition, CompiledRule, CompiledRules, CompiledTest,
    COMPILED_MAX_AGE_SECONDS,
};

/// Most conditions of one action rule.
pub const MAX_CONDITIONS: usize = 20;
/// Most rules one import may carry.
pub const MAX_IMPORT: usize = 1000;

/// When a rule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ActionTrigger {
    /// When a page with the visitor script opens (and while it stays open, as
    /// its conditions change).
    Page,
    /// When the visitor opens the chat.
    Chat,
}

/// What an action rule tests. Every variant can be negated (`negate` beside
/// `type`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum ActionCondition {
    /// At least one agent is online.
    #[serde(rename = "AGENT_ONLINE")]
    AgentOnline {},
    /// All agents are offline.
    #[serde(rename = "AGENTS_OFFLINE")]
    AgentsOffline {},
    /// Every agent is busy: at their capacity of open conversations, or offline.
    #[serde(rename = "AGENTS_BUSY")]
    AgentsBusy {},
    /// The visitor has been on the page for `seconds`.
    #[serde(rename = "TIME_ON_PAGE")]
    TimeOnPage {
        /// Seconds on the page (1–86400).
        #[schema(minimum = 1, maximum = 86400)]
        seconds: i64,
    },
    /// The visitor opened this page (its address without query) before.
    #[serde(rename = "REVISIT")]
    Revisit {},
    /// The visitor sent a message on this page.
    #[serde(rename = "SENDS_MESSAGE")]
    SendsMessage {},
    /// The current time is inside a daily window.
    #[serde(rename = "TIME_WINDOW", rename_all = "camelCase")]
    TimeWindow {
        /// Days the window is open on (unique; none: every day).
        #[serde(default)]
        #[schema(max_items = 10)]
        days: Vec<Weekday>,
        /// Start of the window.
        from: TimeOfDay,
        /// End of the window; at or before `from`, it ends the next day (equal
        /// to `from`: a whole day).
        to: TimeOfDay,
        /// IANA zone of `from` and `to`; default the workspace's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(example = "Europe/Berlin")]
        time_zone: Option<String>,
    },
    /// Inside the named opening hours (negated: outside them).
    #[serde(rename = "OPENING_HOURS", rename_all = "camelCase")]
    OpeningHours {
        /// Id of opening hours of the tenant.
        opening_hours_id: String,
    },
    /// The page's address matches one of `urls`.
    #[serde(rename = "URL")]
    Url {
        /// Patterns (1–50, unique, each 1–2048 characters); `*` matches any run
        /// of characters, and a pattern matches the whole address.
        #[schema(min_items = 1, max_items = 50)]
        urls: Vec<String>,
    },
    /// The visitor carries tags (set by the page, `Rapport('tag', …)`).
    #[serde(rename = "HAS_TAG")]
    HasTag {
        /// Tags (1–50, unique, each 1–64 characters), compared without regard to case.
        #[schema(value_type = Vec<crate::validate::Tag>, min_items = 1, max_items = 50)]
        tags: Vec<String>,
        /// `ANY` (default) or `ALL` of the tags.
        #[serde(default, rename = "match")]
        mode: TagMatch,
    },
    /// The page fired the named event (`Rapport('event', name)`).
    #[serde(rename = "JS_EVENT")]
    JsEvent {
        /// The event's name (1–100 characters).
        #[schema(min_length = 1, max_length = 100, pattern = r"\S")]
        name: String,
    },
}

/// A condition of an action rule, and whether it is negated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ActionRuleCondition {
    /// What it tests.
    #[serde(flatten)]
    pub test: ActionCondition,
    /// True: the condition holds when the test does not (default false).
    #[serde(default)]
    pub negate: bool,
}

/// What a matching action rule does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type")]
pub enum ChatAction {
    /// Show the chat button.
    #[serde(rename = "SHOW_BUTTON")]
    ShowButton {},
    /// Hide the chat button (an open chat stays open).
    #[serde(rename = "HIDE_BUTTON")]
    HideButton {},
    /// Open the chat with a proactive message: `message`, or the messages of
    /// the flow `flowId` (exactly one of the two). It joins the conversation
    /// only when the visitor answers.
    #[serde(rename = "OPEN_CHAT", rename_all = "camelCase")]
    OpenChat {
        /// The text (1–2000 characters).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(max_length = 2000)]
        message: Option<String>,
        /// Id of a flow of the tenant.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flow_id: Option<String>,
    },
    /// Open the chat on the offline form.
    #[serde(rename = "SHOW_OFFLINE_FORM")]
    ShowOfflineForm {},
    /// Open the chat offering a video call, with an optional text.
    #[serde(rename = "OFFER_CALL")]
    OfferCall {
        /// The offer's text (at most 2000 characters); default the widget's own.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[schema(max_length = 2000)]
        message: Option<String>,
    },
}

/// An action rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "Help on checkout", "trigger": "PAGE",
    "conditions": [{"type": "URL", "urls": ["https://shop.example.com/checkout*"]}, {"type": "TIME_ON_PAGE", "seconds": 30}, {"type": "AGENTS_BUSY", "negate": true}],
    "action": {"type": "OPEN_CHAT", "message": "Need a hand with your order?"}}))]
pub struct ActionRule {
    /// Id and timestamps.
    #[serde(flatten)]
    pub meta: Meta,
    /// Name (required, at most 200 characters). Rules are evaluated in order of name.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// Whether the rule is applied; default true.
    pub active: Option<bool>,
    /// When it runs (required).
    #[schema(required = true, nullable = false)]
    pub trigger: Option<ActionTrigger>,
    /// Conditions, all of which must hold (at most 20; none: always).
    #[serde(default)]
    #[schema(max_items = 20)]
    pub conditions: Vec<ActionRuleCondition>,
    /// What it does (required).
    #[schema(required = true, nullable = false)]
    pub action: Option<ChatAction>,
}

impl ConfigKind for ActionRule {
    const KIND: &'static str = "actionrule";
    const LABEL: &'static str = "action rule";
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

impl ChatAction {
    /// `OPEN_CHAT` takes exactly one of a non-blank `message` and a `flowId`, as
    /// a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{
            "if": {"properties": {"type": {"const": "OPEN_CHAT"}}, "required": ["type"]},
            "then": {"oneOf": [
                {"required": ["message"], "properties": {
                    "message": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": "\\S"},
                    "flowId": {"type": "null"}}},
                {"required": ["flowId"], "properties": {
                    "flowId": {"type": "string"},
                    "message": {"type": "null"}}}
            ]},
        }])
    }
}

impl ActionRule {
    /// Opening hours the rule tests.
    pub fn opening_hours_ids(&self) -> Vec<String> {
        self.conditions
            .iter()
            .filter_map(|c| match &c.test {
                ActionCondition::OpeningHours { opening_hours_id } => Some(opening_hours_id.clone()),
                _ => None,
            })
            .collect()
    }

    /// The flow the rule opens the chat with.
    pub fn flow_id(&self) -> Option<&str> {
        match &self.action {
            Some(ChatAction::OpenChat { flow_id, .. }) => flow_id.as_deref(),
            _ => None,
        }
    }
}

/// What a proactive message that the visitor answered puts into the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Greeting {
    /// The rule's text.
    Text(String),
    /// The messages of the flow with this id.
    Flow(String),
}

/// Whether a visitor's agents can be reached now, for the `AGENT_ONLINE`,
/// `AGENTS_OFFLINE` and `AGENTS_BUSY` conditions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AgentsNow {
    /// At least one agent is online.
    pub online: bool,
    /// At least one online agent has room for another conversation.
    pub available: bool,
}

/// Checks a rule, collecting the references it makes; `prefix` is empty for a
/// rule saved alone and `rules[i].` for one of an import.
fn check_action_rule(checks: &mut Checks, prefix: &str, rule: &mut ActionRule, refs: &mut super::References) {
    let at = |name: &str| format!("{prefix}{name}");
    rule.name = Some(checks.required_text(&at("name"), rule.name.as_deref(), 200));
    if rule.active.is_none() {
        rule.active = Some(true);
    }
    if rule.trigger.is_none() {
        checks.push(&at("trigger"), "required", "trigger is required: PAGE or CHAT");
    }
    if rule.conditions.len() > MAX_CONDITIONS {
        checks.push(
            &at("conditions"),
            "too_many",
            format!("conditions may hold at most {MAX_CONDITIONS} items"),
        );
    }
    for (i, c) in rule.conditions.iter_mut().enumerate() {
        let field = |name: &str| format!("{prefix}conditions[{i}].{name}");
        match &mut c.test {
            ActionCondition::TimeOnPage { seconds } => checks.in_range(&field("seconds"), *seconds, 1..=86_400),
            ActionCondition::TimeWindow {
                days,
                from,
                to,
                time_zone,
            } => {
                checks.unique_items(&field("days"), days, 10, |_, _, _| {});
                for (name, t) in [("from", *from), ("to", *to)] {
                    checks.in_range(&field(&format!("{name}.hour")), t.hour.into(), 0..=23);
                    checks.in_range(&field(&format!("{name}.minute")), t.minute.into(), 0..=59);
                }
                if let Some(zone) = time_zone {
                    checks.timezone(&field("timeZone"), zone);
                }
            }
            ActionCondition::OpeningHours { opening_hours_id } => refs
                .opening_hours
                .push((field("openingHoursId"), opening_hours_id.clone())),
            ActionCondition::Url { urls } => non_empty_strings(checks, &field("urls"), urls, 50),
            ActionCondition::HasTag { tags, .. } => {
                if tags.is_empty() {
                    checks.push(&field("tags"), "required", "tags needs at least one tag");
                }
                checks.tags(&field("tags"), tags, 50);
            }
            ActionCondition::JsEvent { name } => {
                *name = checks.required_text(&field("name"), Some(name.as_str()), 100);
            }
            ActionCondition::AgentOnline {}
            | ActionCondition::AgentsOffline {}
            | ActionCondition::AgentsBusy {}
            | ActionCondition::Revisit {}
            | ActionCondition::SendsMessage {} => {}
        }
    }
    match &mut rule.action {
        None => checks.push(&at("action"), "required", "action is required"),
        Some(ChatAction::OpenChat { message, flow_id }) => match (message.as_deref(), flow_id.as_deref()) {
            (Some(_), None) => {
                *message = Some(checks.required_text(&at("action.message"), message.as_deref(), 2000));
            }
            (None, Some(id)) => refs.flows.push((at("action.flowId"), id.to_string())),
            _ => checks.push(
                &at("action.message"),
                "one_of",
                "OPEN_CHAT takes exactly one of message and flowId",
            ),
        },
        Some(ChatAction::OfferCall { message }) => {
            *message = checks.optional_text(&at("action.message"), message.as_deref(), 2000);
        }
        Some(_) => {}
    }
}

impl Services {
    /// Creates or overrides an action rule.
    pub async fn save_action_rule(
        &self,
        tenant_id: &TenantId,
        mut input: ActionRule,
        actor: &Actor,
    ) -> CoreResult<ActionRule> {
        let mut checks = Checks::new();
        let mut refs = super::References::default();
        check_action_rule(&mut checks, "", &mut input, &mut refs);
        self.resolve_references(tenant_id, &mut checks, refs).await?;
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }

    /// Deletes an action rule.
    pub async fn delete_action_rule(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        self.config_delete::<ActionRule>(tenant_id, id, actor).await
    }

    /// Every action rule of the tenant, by name: the export.
    pub async fn export_action_rules(&self, tenant_id: &TenantId) -> CoreResult<Vec<ActionRule>> {
        self.config_all::<ActionRule>(tenant_id).await
    }

    /// Imports action rules, all or none: every rule is checked first (problems
    /// name `rules[i].…`), then each is saved. A rule with the id of one of the
    /// tenant's action rules replaces it; any other (no id, or an id from
    /// another workspace's export) is created new.
    pub async fn import_action_rules(
        &self,
        tenant_id: &TenantId,
        mut rules: Vec<ActionRule>,
        actor: &Actor,
    ) -> CoreResult<Vec<ActionRule>> {
        let mut checks = Checks::new();
        if rules.len() > MAX_IMPORT {
            checks.push(
                "rules",
                "too_many",
                format!("import at most {MAX_IMPORT} rules at once"),
            );
            return checks.finish().map(|_| Vec::new());
        }
        let existing: std::collections::HashSet<String> = self
            .config_all::<ActionRule>(tenant_id)
            .await?
            .into_iter()
            .filter_map(|r| r.meta.id)
            .collect();
        let mut refs = super::References::default();
        for (i, rule) in rules.iter_mut().enumerate() {
            if rule.meta.id.as_ref().is_some_and(|id| !existing.contains(id)) {
                rule.meta.id = None;
            }
            check_action_rule(&mut checks, &format!("rules[{i}]."), rule, &mut refs);
        }
        self.resolve_references(tenant_id, &mut checks, refs).await?;
        checks.finish()?;
        let mut saved = Vec::with_capacity(rules.len());
        for rule in rules {
            saved.push(self.config_write(tenant_id, rule, actor).await?);
        }
        Ok(saved)
    }

    /// What the proactive message of action rule `rule_id` puts into the
    /// conversation when the visitor answers it: `None` for a rule that is gone,
    /// switched off, or does not open the chat with a message (the visitor's
    /// answer is then stored alone: it must never be lost to a rule edited
    /// while the page was open). Only the rule's own text is ever stored, never
    /// what the visitor's page claims it showed.
    pub(crate) async fn action_rule_greeting(
        &self,
        tenant_id: &TenantId,
        rule_id: &str,
    ) -> CoreResult<Option<Greeting>> {
        let rule = match self.config_get::<ActionRule>(tenant_id, rule_id).await {
            Ok(rule) => rule,
            Err(CoreError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        if rule.active == Some(false) {
            return Ok(None);
        }
        Ok(match rule.action {
            Some(ChatAction::OpenChat {
                message: Some(text), ..
            }) => Some(Greeting::Text(text)),
            Some(ChatAction::OpenChat {
                flow_id: Some(flow), ..
            }) => Some(Greeting::Flow(flow)),
            _ => None,
        })
    }

    /// The zone of the tenant's settings (its reports' and time windows' default).
    pub(super) async fn tenant_zone(&self, tenant_id: &TenantId) -> CoreResult<Tz> {
        let tenant = self.get_tenant(tenant_id).await?;
        Ok(tenant.timezone.parse().unwrap_or(Tz::UTC))
    }
}

#[cfg(test)]
mod tests;
