//! The builder's drafts of a rule: one flat shape per condition and action,
//! whichever variant is chosen, read from and written to the REST API's JSON.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::RuleKind;

/// A condition of any kind of rule, whichever variant it is. The fields an
/// action rule's conditions add are in [`crate::api::action_rules`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConditionDraft {
    /// API `type`: `HAS_TAG`, `HAS_ID`, `URL`, `OPENING_HOUR`, `NO_ANSWER`.
    pub kind: String,
    /// Tags, ids or URL patterns, separated by commas or lines.
    pub list: String,
    /// `HAS_TAG`: every tag rather than any.
    pub all: bool,
    /// `HAS_TAG`: whose tags count: `ANY`, `TRUSTED` (agents and
    /// integrations) or `PAGE` (the visitor's page).
    pub source: String,
    /// `NO_ANSWER`: seconds.
    pub seconds: i64,
    /// `OPENING_HOUR`: the opening hours' id.
    pub opening_hours_id: String,
    /// `OPENING_HOUR`: inside rather than outside.
    pub inside: bool,
    /// Action rules: the condition holds when its test does not.
    pub negate: bool,
    /// Action rules, `JS_EVENT`: the event's name.
    pub name: String,
    /// Action rules, `TIME_WINDOW`: the days (a `Weekday` value), start and
    /// end (`HH:MM`) and zone (empty: the workspace's).
    pub days: String,
    /// See `days`.
    pub from: String,
    /// See `days`.
    pub to: String,
    /// See `days`.
    pub time_zone: String,
}

impl Default for ConditionDraft {
    fn default() -> Self {
        Self {
            kind: "HAS_TAG".into(),
            list: String::new(),
            all: false,
            source: "ANY".into(),
            seconds: 60,
            opening_hours_id: String::new(),
            inside: true,
            negate: false,
            name: String::new(),
            days: "EVERYDAY".into(),
            from: "09:00".into(),
            to: "17:00".into(),
            time_zone: String::new(),
        }
    }
}

/// An action of a routing rule, whichever variant it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionDraft {
    /// API `type`: `QUEUE`, `SYSTEM_MESSAGE`, `ROUTING_TO`, `SEND_FLOW`.
    pub kind: String,
    /// `QUEUE`: `USER`, `TEAM` or `TAG`.
    pub target_kind: String,
    /// `QUEUE`: the user id, team id or tag.
    pub target: String,
    /// `QUEUE`: `ANY`, `ONLINE` or `AVAILABLE`.
    pub agent_state: String,
    /// `QUEUE`: longest wait, seconds.
    pub max_wait_seconds: i64,
    /// The system message, rule or flow id of the other variants.
    pub reference: String,
}

impl Default for ActionDraft {
    fn default() -> Self {
        Self {
            kind: "QUEUE".into(),
            target_kind: "TEAM".into(),
            target: String::new(),
            agent_state: "ANY".into(),
            max_wait_seconds: 5400,
            reference: String::new(),
        }
    }
}

/// A routing rule (with its nested else-rules) or an SLA rule, as the builder
/// edits it. Fields of the other kind of rule are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleDraft {
    /// Name.
    pub name: String,
    /// Applied or not.
    pub active: bool,
    /// Routing, top-level rules: where it stands in the order rules are tried
    /// (lower first); none keeps its place, or puts a new rule last.
    pub priority: Option<i64>,
    /// Conditions, all of which must hold.
    pub conditions: Vec<ConditionDraft>,
    /// Routing: `CHAT`, `CALL`.
    pub types: Vec<String>,
    /// Routing: what a match does.
    pub actions: Vec<ActionDraft>,
    /// Routing: rules tried when this one does not match.
    pub else_rules: Vec<RuleDraft>,
    /// SLA: seconds to the first answer.
    pub first_response_seconds: i64,
    /// SLA: seconds to each later answer.
    pub second_response_seconds: i64,
    /// SLA: who hears of a miss, `(type, value)`.
    pub receivers: Vec<(String, String)>,
    /// SLA: whether misses alert the receivers.
    pub watchdog_enabled: bool,
    /// Action: `PAGE` or `CHAT`.
    pub trigger: String,
    /// Action: what a match does.
    pub visitor_action: crate::api::action_rules::VisitorActionDraft,
}

impl Default for RuleDraft {
    fn default() -> Self {
        Self {
            name: String::new(),
            active: true,
            priority: None,
            conditions: Vec::new(),
            types: vec!["CHAT".into()],
            actions: Vec::new(),
            else_rules: Vec::new(),
            first_response_seconds: 60,
            second_response_seconds: 300,
            receivers: Vec::new(),
            watchdog_enabled: true,
            trigger: "PAGE".into(),
            visitor_action: Default::default(),
        }
    }
}

/// Splits a list typed with commas or line breaks.
pub(in crate::api) fn items(list: &str) -> Vec<String> {
    list.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub(in crate::api) fn text(v: &Value, key: &str) -> String {
    v.get(key).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn strings(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(", "))
        .unwrap_or_default()
}

impl ConditionDraft {
    fn to_api(&self) -> Value {
        match self.kind.as_str() {
            "HAS_ID" => json!({"type": "HAS_ID", "ids": items(&self.list)}),
            "URL" => json!({"type": "URL", "urls": items(&self.list)}),
            "OPENING_HOUR" => {
                json!({"type": "OPENING_HOUR", "openingHoursId": self.opening_hours_id, "inside": self.inside})
            }
            "NO_ANSWER" => json!({"type": "NO_ANSWER", "seconds": self.seconds}),
            _ => {
                let mut condition = json!({"type": "HAS_TAG", "tags": items(&self.list), "match": if self.all { "ALL" } else { "ANY" }});
                // `ANY` is the default, which the server leaves out too.
                if self.source != "ANY" {
                    condition["source"] = json!(self.source);
                }
                condition
            }
        }
    }

    fn from_api(v: &Value) -> Self {
        let kind = text(v, "type");
        let list = match kind.as_str() {
            "HAS_ID" => strings(v, "ids"),
            "URL" => strings(v, "urls"),
            _ => strings(v, "tags"),
        };
        ConditionDraft {
            list,
            all: text(v, "match") == "ALL",
            source: Some(text(v, "source"))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "ANY".into()),
            seconds: v.get("seconds").and_then(Value::as_i64).unwrap_or(60),
            opening_hours_id: text(v, "openingHoursId"),
            inside: v.get("inside").and_then(Value::as_bool).unwrap_or(true),
            kind,
            ..crate::api::action_rules::condition_extras(v)
        }
    }
}

impl ActionDraft {
    fn to_api(&self) -> Value {
        match self.kind.as_str() {
            "SYSTEM_MESSAGE" => json!({"type": "SYSTEM_MESSAGE", "systemMessageId": self.reference}),
            "ROUTING_TO" => json!({"type": "ROUTING_TO", "ruleId": self.reference}),
            "SEND_FLOW" => json!({"type": "SEND_FLOW", "flowId": self.reference.trim()}),
            _ => json!({
                "type": "QUEUE",
                "target": {"type": self.target_kind, "value": self.target.trim()},
                "agentState": self.agent_state,
                "maxWaitSeconds": self.max_wait_seconds,
            }),
        }
    }

    fn from_api(v: &Value) -> Self {
        let kind = text(v, "type");
        let target = v.get("target").cloned().unwrap_or(Value::Null);
        let reference = ["systemMessageId", "ruleId", "flowId"]
            .iter()
            .map(|k| text(v, k))
            .find(|s| !s.is_empty())
            .unwrap_or_default();
        let default = ActionDraft::default();
        ActionDraft {
            target_kind: Some(text(&target, "type"))
                .filter(|s| !s.is_empty())
                .unwrap_or(default.target_kind),
            target: text(&target, "value"),
            agent_state: Some(text(v, "agentState"))
                .filter(|s| !s.is_empty())
                .unwrap_or(default.agent_state),
            max_wait_seconds: v
                .get("maxWaitSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(default.max_wait_seconds),
            reference,
            kind,
        }
    }
}

impl RuleDraft {
    /// The rule in the REST API's shape (without id).
    pub fn to_api(&self, kind: RuleKind) -> Value {
        if kind == RuleKind::Action {
            return self.to_action_api();
        }
        let mut out = Map::new();
        out.insert("name".into(), json!(self.name.trim()));
        out.insert("active".into(), json!(self.active));
        out.insert(
            "conditions".into(),
            Value::Array(self.conditions.iter().map(ConditionDraft::to_api).collect()),
        );
        match kind {
            RuleKind::Routing => {
                if let Some(priority) = self.priority {
                    out.insert("priority".into(), json!(priority));
                }
                out.insert("types".into(), json!(self.types));
                out.insert(
                    "actions".into(),
                    Value::Array(self.actions.iter().map(ActionDraft::to_api).collect()),
                );
                out.insert(
                    "elseRules".into(),
                    Value::Array(self.else_rules.iter().map(|r| r.to_api(kind)).collect()),
                );
            }
            RuleKind::Action => {}
            RuleKind::Sla => {
                out.insert(
                    "trigger".into(),
                    json!({
                        "firstResponseSeconds": self.first_response_seconds,
                        "secondResponseSeconds": self.second_response_seconds,
                    }),
                );
                // Every row, blank ones too: problems name receivers by index,
                // which must stay the row's.
                let receivers: Vec<Value> = self
                    .receivers
                    .iter()
                    .map(|(kind, value)| json!({"type": kind, "value": value.trim()}))
                    .collect();
                out.insert("receivers".into(), Value::Array(receivers));
                out.insert("watchdogEnabled".into(), json!(self.watchdog_enabled));
            }
        }
        Value::Object(out)
    }

    /// The draft of a rule in the REST API's shape.
    pub fn from_api(v: &Value) -> Self {
        let list = |key: &str| v.get(key).and_then(Value::as_array).cloned().unwrap_or_default();
        let default = RuleDraft::default();
        let trigger = v.get("trigger").cloned().unwrap_or(Value::Null);
        RuleDraft {
            name: text(v, "name"),
            active: v.get("active").and_then(Value::as_bool).unwrap_or(true),
            priority: v.get("priority").and_then(Value::as_i64),
            conditions: list("conditions").iter().map(ConditionDraft::from_api).collect(),
            types: list("types")
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            actions: list("actions").iter().map(ActionDraft::from_api).collect(),
            else_rules: list("elseRules").iter().map(RuleDraft::from_api).collect(),
            first_response_seconds: trigger
                .get("firstResponseSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(default.first_response_seconds),
            second_response_seconds: trigger
                .get("secondResponseSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(default.second_response_seconds),
            receivers: list("receivers")
                .iter()
                .map(|r| (text(r, "type"), text(r, "value")))
                .collect(),
            watchdog_enabled: v.get("watchdogEnabled").and_then(Value::as_bool).unwrap_or(false),
            trigger: v
                .get("trigger")
                .and_then(Value::as_str)
                .unwrap_or(&default.trigger)
                .to_string(),
            visitor_action: v
                .get("action")
                .map(crate::api::action_rules::VisitorActionDraft::from_api)
                .unwrap_or_default(),
        }
    }

    /// The rule at `path` (indices into nested `else_rules`).
    pub fn at_mut(&mut self, path: &[usize]) -> Option<&mut RuleDraft> {
        match path.split_first() {
            None => Some(self),
            Some((first, rest)) => self.else_rules.get_mut(*first)?.at_mut(rest),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_survives_the_round_trip_through_the_api_shape() {
        let api = json!({
            "name": "VIP",
            "active": true,
            "priority": 30,
            "types": ["CHAT"],
            "conditions": [
                {"type": "HAS_TAG", "tags": ["vip", "gold"], "match": "ALL"},
                {"type": "OPENING_HOUR", "openingHoursId": "oh1", "inside": false},
                {"type": "NO_ANSWER", "seconds": 90}
            ],
            "actions": [{"type": "QUEUE", "target": {"type": "TEAM", "value": "t1"}, "agentState": "ONLINE", "maxWaitSeconds": 600}],
            "elseRules": [{
                "name": "Others", "active": true, "types": ["CHAT", "CALL"], "conditions": [],
                "actions": [{"type": "SYSTEM_MESSAGE", "systemMessageId": "m1"}], "elseRules": []
            }]
        });
        let draft = RuleDraft::from_api(&api);
        assert_eq!(draft.conditions[0].list, "vip, gold");
        assert_eq!(draft.else_rules[0].actions[0].reference, "m1");
        assert_eq!((draft.priority, draft.else_rules[0].priority), (Some(30), None));
        assert_eq!(draft.to_api(RuleKind::Routing), api);
    }

    #[test]
    fn lists_split_on_commas_and_lines_and_nested_rules_are_reached_by_path() {
        assert_eq!(items("a, b\nc,,"), ["a", "b", "c"]);
        let mut draft = RuleDraft::default();
        draft.else_rules.push(RuleDraft::default());
        draft.else_rules[0].else_rules.push(RuleDraft {
            name: "deep".into(),
            ..Default::default()
        });
        assert_eq!(draft.at_mut(&[0, 0]).map(|r| r.name.clone()), Some("deep".into()));
        assert!(draft.at_mut(&[1]).is_none());
    }

    #[test]
    fn sla_rules_carry_trigger_and_receivers_but_no_routing_fields() {
        let draft = RuleDraft {
            name: "Fast".into(),
            receivers: vec![("EMAIL".into(), " lead@example.com ".into())],
            ..Default::default()
        };
        let api = draft.to_api(RuleKind::Sla);
        assert_eq!(
            api["receivers"],
            json!([{"type": "EMAIL", "value": "lead@example.com"}])
        );
        assert_eq!(
            RuleDraft::from_api(&api).receivers,
            draft
                .receivers
                .iter()
                .map(|(k, v)| (k.clone(), v.trim().to_string()))
                .collect::<Vec<_>>()
        );
        assert_eq!(api["trigger"]["firstResponseSeconds"], 60);
        assert!(api.get("elseRules").is_none());
    }
}
