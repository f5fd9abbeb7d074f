//! Flows of the tenant, from the dashboard (admins): the same services as
//! `/rest/v1/flow`. A flow is a name and an ordered list of messages that a
//! routing rule's `SEND_FLOW` action sends to the customer.
//!
//! The editor keeps the messages as [`FlowMessageDraft`]s (one flat shape per
//! message, whichever type it has, so switching the type keeps what was typed)
//! and submits them as the REST API's JSON array (field `messages`), so that the
//! service's problems (`messages[2].buttonLink`) name the same paths as over REST,
//! and the form works without JavaScript as a JSON text box.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where flows are managed.
pub const FLOWS_PATH: &str = "/settings/flows";

/// Most messages in a flow (the service's limit).
pub const MAX_MESSAGES: usize = 20;

/// Message types a flow can send: API `type`, label.
pub const FLOW_MESSAGE_TYPES: [(&str, &str); 5] = [
    ("MESSAGE", "Text"),
    ("CARD", "Card with a button"),
    ("FILE", "File"),
    ("AUDIO", "Audio"),
    ("VIDEO", "Video"),
];

/// One message of a flow as the editor holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowMessageDraft {
    /// API `type`.
    pub kind: String,
    /// Text, or a caption.
    pub message: String,
    /// `FILE`, `AUDIO`, `VIDEO`: the URL.
    pub url: String,
    /// `CARD`: the button's text.
    pub button_text: String,
    /// `CARD`: the button's link.
    pub button_link: String,
}

impl Default for FlowMessageDraft {
    fn default() -> Self {
        Self {
            kind: "MESSAGE".into(),
            message: String::new(),
            url: String::new(),
            button_text: String::new(),
            button_link: String::new(),
        }
    }
}

impl FlowMessageDraft {
    /// The message in the REST API's shape: the fields its type uses, blank
    /// ones left out.
    pub fn to_api(&self) -> Value {
        let mut map = Map::new();
        map.insert("type".into(), Value::from(self.kind.clone()));
        let media = matches!(self.kind.as_str(), "FILE" | "AUDIO" | "VIDEO");
        let card = self.kind == "CARD";
        let fields = [
            ("message", &self.message, true),
            ("url", &self.url, media),
            ("buttonText", &self.button_text, card),
            ("buttonLink", &self.button_link, card),
        ];
        for (name, value, used) in fields {
            if used && !value.trim().is_empty() {
                map.insert(name.into(), Value::from(value.clone()));
            }
        }
        Value::Object(map)
    }

    /// A message in the REST API's shape.
    pub fn from_api(value: &Value) -> Self {
        let text = |name: &str| value.get(name).and_then(Value::as_str).unwrap_or_default().to_string();
        Self {
            kind: value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("MESSAGE")
                .to_string(),
            message: text("message"),
            url: text("url"),
            button_text: text("buttonText"),
            button_link: text("buttonLink"),
        }
    }
}

/// The messages as the form submits them: the REST API's JSON array.
pub fn messages_json(messages: &[FlowMessageDraft]) -> String {
    let list: Vec<Value> = messages.iter().map(FlowMessageDraft::to_api).collect();
    serde_json::to_string_pretty(&list).unwrap_or_default()
}

/// A flow in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowSummary {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// How many messages it sends.
    pub messages: usize,
    /// The first message's text (or link), shortened.
    pub first: String,
}

/// A flow as the editor shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowView {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// The messages, in the order they are sent.
    pub messages: Vec<FlowMessageDraft>,
}

#[cfg(feature = "ssr")]
mod server {
    use rapport_core::{config::flows::Flow, error::CoreError};

    use super::{FlowMessageDraft, FlowSummary, FlowView};

    pub(super) fn view(flow: Flow) -> FlowView {
        FlowView {
            id: flow.meta.id.unwrap_or_default(),
            name: flow.name.unwrap_or_default(),
            messages: flow
                .messages
                .iter()
                .map(|m| FlowMessageDraft::from_api(&serde_json::to_value(m).unwrap_or_default()))
                .collect(),
        }
    }

    pub(super) fn summary(flow: Flow) -> FlowSummary {
        let first = flow
            .messages
            .first()
            .and_then(|m| m.message.clone().or(m.button_text.clone()).or(m.url.clone()))
            .unwrap_or_default();
        let short: String = first.chars().take(80).collect();
        let ellipsis = if short.len() < first.len() { "…" } else { "" };
        FlowSummary {
            id: flow.meta.id.unwrap_or_default(),
            name: flow.name.unwrap_or_default(),
            messages: flow.messages.len(),
            first: format!("{short}{ellipsis}"),
        }
    }

    /// The flow the form posted: its name, and its messages in the API's shape.
    pub(super) fn input(id: Option<String>, name: String, messages: &str) -> Result<Flow, CoreError> {
        let messages = serde_json::from_str(messages).map_err(|e| {
            CoreError::invalid(
                "messages",
                "invalid_json",
                format!("the messages are not a JSON list in the API's shape: {e}"),
            )
        })?;
        Ok(Flow {
            meta: rapport_core::config::Meta {
                id,
                ..Default::default()
            },
            name: Some(name),
            messages,
        })
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// Every flow, by name.
#[server(endpoint = "list_flows")]
pub async fn list_flows() -> Result<Vec<FlowSummary>, ServerFnError> {
    use rapport_core::config::flows::Flow;
    let (ctx, user) = admin().await?;
    Ok(ctx
        .services
        .config_all::<Flow>(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .map(server::summary)
        .collect())
}

/// One flow.
#[server(endpoint = "get_flow")]
pub async fn get_flow(id: String) -> Result<FlowView, ServerFnError> {
    use rapport_core::config::flows::Flow;
    let (ctx, user) = admin().await?;
    ctx.services
        .config_get::<Flow>(&user.tenant_id, &id)
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Creates (no `id`) or replaces a flow; `messages` is the REST API's JSON
/// array. A new flow's page opens at its own address.
#[server(endpoint = "save_flow")]
pub async fn save_flow(id: Option<String>, name: String, messages: String) -> Result<FlowView, ServerFnError> {
    use rapport_core::config::flows::Flow;
    let (ctx, user) = admin().await?;
    let id = id.filter(|id| !id.is_empty());
    if let Some(id) = &id {
        // Overriding an unknown id is a 404 from the service too; asking first
        // answers another tenant's ids the same way before anything is parsed.
        ctx.services
            .config_get::<Flow>(&user.tenant_id, id)
            .await
            .map_err(crate::ssr::to_server_error)?;
    }
    let created = id.is_none();
    let input = server::input(id, name, &messages).map_err(crate::ssr::to_server_error)?;
    let saved = ctx
        .services
        .save_flow(&user.tenant_id, input, &crate::ssr::actor(&user))
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)?;
    if created {
        leptos_axum::redirect(&format!("{FLOWS_PATH}/{}", saved.id));
    }
    Ok(saved)
}

/// Deletes a flow no routing rule sends, then shows the list.
#[server(endpoint = "remove_flow")]
pub async fn remove_flow(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_flow(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(FLOWS_PATH);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_keeps_only_the_fields_its_type_uses() {
        let card = FlowMessageDraft {
            kind: "CARD".into(),
            message: "Our help centre".into(),
            url: "https://left.over/from-a-file".into(),
            button_text: "Open".into(),
            button_link: "https://help.example.com".into(),
        };
        let api = card.to_api();
        assert_eq!(
            api,
            serde_json::json!({"type": "CARD", "message": "Our help centre", "buttonText": "Open", "buttonLink": "https://help.example.com"})
        );
        let back = FlowMessageDraft::from_api(&api);
        assert_eq!(back.button_link, card.button_link);
        assert!(back.url.is_empty());
        let text = FlowMessageDraft {
            message: "Hi".into(),
            ..Default::default()
        };
        assert_eq!(text.to_api(), serde_json::json!({"type": "MESSAGE", "message": "Hi"}));
    }
}
