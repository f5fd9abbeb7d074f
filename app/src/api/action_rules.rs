//! Action rules from the dashboard: their parts in the builder's draft (the
//! rest of the rule pages are shared with routing and SLA rules, in
//! [`super::rules`]), and export and import as one JSON document, the same
//! services as `GET /rest/v1/rule/action/export` and `POST …/import`.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::rules::{items, text, ConditionDraft, RuleDraft};

/// Condition variants of an action rule: API `type`, label.
pub const ACTION_CONDITION_TYPES: [(&str, &str); 11] = [
    ("URL", "The page's address is"),
    ("TIME_ON_PAGE", "On the page for"),
    ("AGENT_ONLINE", "An agent is online"),
    ("AGENTS_OFFLINE", "All agents are offline"),
    ("AGENTS_BUSY", "All agents are busy"),
    ("OPENING_HOURS", "Inside opening hours"),
    ("TIME_WINDOW", "The time is between"),
    ("HAS_TAG", "The visitor has tags"),
    ("REVISIT", "The visitor revisits the page"),
    ("SENDS_MESSAGE", "The visitor sends a message"),
    ("JS_EVENT", "The page fires an event"),
];

/// What an action rule can do: API `type`, label.
pub const VISITOR_ACTION_TYPES: [(&str, &str); 5] = [
    ("OPEN_CHAT", "Open the chat with a message"),
    ("SHOW_BUTTON", "Show the chat button"),
    ("HIDE_BUTTON", "Hide the chat button"),
    ("SHOW_OFFLINE_FORM", "Show the offline form"),
    ("OFFER_CALL", "Offer a video call"),
];

/// When an action rule runs: API value, label.
pub const TRIGGERS: [(&str, &str); 2] = [
    ("PAGE", "When a page opens"),
    ("CHAT", "When the visitor opens the chat"),
];

/// An action rule's action, whichever variant it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VisitorActionDraft {
    /// API `type`.
    pub kind: String,
    /// `OPEN_CHAT`, `OFFER_CALL`: the text.
    pub message: String,
    /// `OPEN_CHAT`: a flow instead of a text.
    pub flow_id: String,
}

impl Default for VisitorActionDraft {
    fn default() -> Self {
        Self {
            kind: "OPEN_CHAT".into(),
            message: String::new(),
            flow_id: String::new(),
        }
    }
}

impl VisitorActionDraft {
    /// The draft of an action in the REST API's shape.
    pub fn from_api(v: &Value) -> Self {
        VisitorActionDraft {
            kind: text(v, "type"),
            message: text(v, "message"),
            flow_id: text(v, "flowId"),
        }
    }

    fn to_api(&self) -> Value {
        match self.kind.as_str() {
            // A flow when one is picked, else the text (which the service
            // requires when neither is given).
            "OPEN_CHAT" if !self.flow_id.is_empty() => json!({"type": "OPEN_CHAT", "flowId": self.flow_id}),
            "OPEN_CHAT" => json!({"type": "OPEN_CHAT", "message": self.message}),
            "OFFER_CALL" if self.message.trim().is_empty() => json!({"type": "OFFER_CALL"}),
            "OFFER_CALL" => json!({"type": "OFFER_CALL", "message": self.message}),
            kind => json!({ "type": kind }),
        }
    }
}

/// `09:30` from the API's `{hour, minute}`.
fn clock(v: Option<&Value>) -> Option<String> {
    let v = v?;
    Some(format!(
        "{:02}:{:02}",
        v.get("hour")?.as_i64()?,
        v.get("minute")?.as_i64()?
    ))
}

/// The API's `{hour, minute}` from `09:30`; what does not read as a time is
/// sent as an hour the service refuses, so the problem names the field.
fn time_of_day(text: &str) -> Value {
    let mut parts = text.trim().splitn(2, ':').map(|p| p.trim().parse::<i64>().ok());
    match (parts.next().flatten(), parts.next().flatten()) {
        (Some(hour), minute) => json!({"hour": hour, "minute": minute.unwrap_or(0)}),
        _ => json!({"hour": -1, "minute": 0}),
    }
}

/// The fields only action rules' conditions have, read from the API's shape
/// (defaults where a condition has none).
pub fn condition_extras(v: &Value) -> ConditionDraft {
    let default = ConditionDraft::default();
    let days = v
        .get("days")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(Value::as_str)
        .map(str::to_string);
    ConditionDraft {
        negate: v.get("negate").and_then(Value::as_bool).unwrap_or(false),
        name: text(v, "name"),
        days: days.unwrap_or(default.days.clone()),
        from: clock(v.get("from")).unwrap_or(default.from.clone()),
        to: clock(v.get("to")).unwrap_or(default.to.clone()),
        time_zone: text(v, "timeZone"),
        ..default
    }
}

impl ConditionDraft {
    /// An action rule's condition in the REST API's shape.
    fn to_action_api(&self) -> Value {
        let mut out = match self.kind.as_str() {
            "URL" => json!({"type": "URL", "urls": items(&self.list)}),
            "TIME_ON_PAGE" => json!({"type": "TIME_ON_PAGE", "seconds": self.seconds}),
            "OPENING_HOURS" => json!({"type": "OPENING_HOURS", "openingHoursId": self.opening_hours_id}),
            "TIME_WINDOW" => {
                let mut window =
                    json!({"type": "TIME_WINDOW", "from": time_of_day(&self.from), "to": time_of_day(&self.to)});
                if self.days != "EVERYDAY" {
                    window["days"] = json!([self.days]);
                }
                if !self.time_zone.trim().is_empty() {
                    window["timeZone"] = json!(self.time_zone.trim());
                }
                window
            }
            "HAS_TAG" => {
                json!({"type": "HAS_TAG", "tags": items(&self.list), "match": if self.all { "ALL" } else { "ANY" }})
            }
            "JS_EVENT" => json!({"type": "JS_EVENT", "name": self.name}),
            kind => json!({ "type": kind }),
        };
        if self.negate {
            out["negate"] = json!(true);
        }
        out
    }
}

impl RuleDraft {
    /// An action rule in the REST API's shape (without id).
    pub(super) fn to_action_api(&self) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), json!(self.name.trim()));
        out.insert("active".into(), json!(self.active));
        out.insert("trigger".into(), json!(self.trigger));
        out.insert(
            "conditions".into(),
            Value::Array(self.conditions.iter().map(ConditionDraft::to_action_api).collect()),
        );
        out.insert("action".into(), self.visitor_action.to_api());
        Value::Object(out)
    }

    /// "When a page opens → Open the chat with a message": the list's summary.
    pub fn action_summary(&self) -> String {
        let label = |list: &[(&str, &str)], value: &str| {
            list.iter()
                .find(|(v, _)| *v == value)
                .map_or(value.to_string(), |(_, l)| l.to_string())
        };
        format!(
            "{} → {}",
            label(&TRIGGERS, &self.trigger),
            label(&VISITOR_ACTION_TYPES, &self.visitor_action.kind)
        )
    }
}

/// Every action rule of the workspace as the export document (pretty JSON),
/// which `import_action_rules` takes back here or in another workspace.
#[server(endpoint = "export_action_rules")]
pub async fn export_action_rules() -> Result<String, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Admin).await?;
    let rules = ctx
        .services
        .export_action_rules(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(serde_json::to_string_pretty(&json!({ "rules": rules })).unwrap_or_default())
}

/// Imports an export document (`rules`: the JSON), all or none: a bad rule
/// names its field (`rules[2].trigger`) and stores nothing. Answers how many
/// rules were stored.
#[server(endpoint = "import_action_rules")]
pub async fn import_action_rules(rules: String) -> Result<usize, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Admin).await?;
    #[derive(Deserialize)]
    struct Document {
        rules: Vec<rapport_core::config::rules::action::ActionRule>,
    }
    let document: Document = serde_json::from_str(&rules).map_err(|e| {
        crate::ssr::to_server_error(rapport_core::CoreError::invalid(
            "rules",
            "invalid_json",
            format!("not an export of action rules ({{\"rules\": [...]}}): {e}"),
        ))
    })?;
    let saved = ctx
        .services
        .import_action_rules(&user.tenant_id, document.rules, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(saved.len())
}

#[cfg(test)]
mod tests {
    use super::super::rules::RuleKind;
    use super::*;

    #[test]
    fn an_action_rule_survives_the_round_trip_through_the_api_shape() {
        let api = json!({
            "name": "Checkout help",
            "active": true,
            "trigger": "PAGE",
            "conditions": [
                {"type": "URL", "urls": ["https://shop.example/checkout*"]},
                {"type": "AGENTS_BUSY", "negate": true},
                {"type": "TIME_WINDOW", "from": {"hour": 9, "minute": 30}, "to": {"hour": 17, "minute": 0}, "days": ["WORKDAYS"], "timeZone": "Europe/Berlin"},
                {"type": "JS_EVENT", "name": "cart-abandoned"},
                {"type": "OPENING_HOURS", "openingHoursId": "oh1", "negate": true}
            ],
            "action": {"type": "OPEN_CHAT", "message": "Need a hand?"}
        });
        let draft = RuleDraft::from_api(&api);
        assert_eq!(draft.conditions[2].from, "09:30");
        assert!(draft.conditions[1].negate);
        assert_eq!(draft.to_api(RuleKind::Action), api);
        assert_eq!(
            draft.action_summary(),
            "When a page opens → Open the chat with a message"
        );
    }

    #[test]
    fn a_time_that_does_not_read_is_sent_for_the_service_to_name() {
        assert_eq!(time_of_day("9"), json!({"hour": 9, "minute": 0}));
        assert_eq!(time_of_day("nine"), json!({"hour": -1, "minute": 0}));
    }
}
