//! Messages (spec 2.3): what is sent to a customer and what a customer sends, per
//! type, and the history of a conversation.
//!
//! This module holds the message types and the content rules; [`send`] stores
//! messages in either direction (and, for a customer's message, runs what it
//! sets off), and [`history`] reads them back.

use serde::{Deserialize, Serialize};

mod history;
mod send;

use super::Trigger;
use crate::{
    audit::{self, Actor, ActorKind},
    db::Tx,
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{CustomerId, MessageId},
    model::{Page, PageRequest},
    reports::facts,
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_db, with_tx, Services,
};

/// A message's kind (spec 2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum MessageType {
    /// Text; `message` is required.
    Message,
    /// An audio file at `url`.
    Audio,
    /// A video at `url`.
    Video,
    /// A file at `url`.
    File,
    /// A button: `buttonText` and `buttonLink`.
    Card,
}

impl MessageType {
    const ALL: [MessageType; 5] = [
        MessageType::Message,
        MessageType::Audio,
        MessageType::Video,
        MessageType::File,
        MessageType::Card,
    ];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            MessageType::Message => "MESSAGE",
            MessageType::Audio => "AUDIO",
            MessageType::Video => "VIDEO",
            MessageType::File => "FILE",
            MessageType::Card => "CARD",
        }
    }

    fn parse(s: &str) -> MessageType {
        MessageType::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .unwrap_or(MessageType::Message)
    }
}

/// Which way a message went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Direction {
    /// From the customer.
    Inbound,
    /// To the customer.
    Outbound,
}

/// Where a message came in or went out.
// Its schema is `MessageChannel`: the routing rules' `Channel` (`CHAT`, `CALL`) has
// the schema name `Channel`, and utoipa would silently merge two schemas of one name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[schema(as = MessageChannel)]
pub enum Channel {
    /// The visitor widget.
    Widget,
    /// The REST API (an integration).
    Api,
    /// The agents' dashboard.
    Dashboard,
    /// A rule: a routing rule's system message or flow, or an action rule's
    /// proactive message that the visitor answered (`senderType` `system`).
    Automation,
}

impl Channel {
    fn as_str(self) -> &'static str {
        match self {
            Channel::Widget => "WIDGET",
            Channel::Api => "API",
            Channel::Dashboard => "DASHBOARD",
            Channel::Automation => "AUTOMATION",
        }
    }

    fn parse(s: &str) -> Channel {
        match s {
            "WIDGET" => Channel::Widget,
            "DASHBOARD" => Channel::Dashboard,
            "AUTOMATION" => Channel::Automation,
            _ => Channel::Api,
        }
    }
}

/// A stored message: the body of `message.received` (the spec's "Message object") and
/// `message.sent`, and an item of the message history.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"id": "0190c3d2-9a00-7c3b-8d5e-1a2b3c4d5e6f", "customerId": "0190c3d2-8c1e-7b7a-9f1e-3f2a1b0c9d8e", "externalId": "crm-1042", "direction": "INBOUND", "type": "MESSAGE", "message": "Where is my order?", "url": null, "buttonText": null, "buttonLink": null, "channel": "WIDGET", "senderType": "customer", "senderId": "0190c3d2-8c1e-7b7a-9f1e-3f2a1b0c9d8e", "createdAt": "2026-11-21T10:15:00Z", "deliveredAt": null}))]
pub struct Message {
    /// Unique id.
    #[schema(value_type = String)]
    pub id: MessageId,
    /// The customer the conversation belongs to.
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// The customer's `externalId`, when it has one.
    pub external_id: Option<String>,
    /// `INBOUND` (from the customer) or `OUTBOUND`.
    pub direction: Direction,
    /// `MESSAGE`, `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    #[serde(rename = "type")]
    pub kind: MessageType,
    /// Text (a caption for media and cards).
    pub message: Option<String>,
    /// URL of the audio, video or file.
    pub url: Option<String>,
    /// A card's button text.
    pub button_text: Option<String>,
    /// A card's button link.
    pub button_link: Option<String>,
    /// `WIDGET`, `API` or `DASHBOARD`.
    pub channel: Channel,
    /// Who wrote it: `customer`, `user`, `apikey` or `system`.
    pub sender_type: ActorKind,
    /// The customer's, user's or key's id.
    pub sender_id: Option<String>,
    /// When it was stored.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Outbound: when the customer's widget received it; null while it waits.
    pub delivered_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A message to send to a customer (spec 2.3), or, on the inbound operation, a
/// message a channel received from one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"customerId": "crm-1042", "isExternalId": true, "type": "MESSAGE", "message": "Your order ships today."}))]
pub struct MessageIn {
    /// Required: the customer's id, or its `externalId` when `isExternalId` is true.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub customer_id: Option<String>,
    /// Required: whether `customerId` is an external id.
    #[schema(required = true, nullable = false)]
    pub is_external_id: Option<bool>,
    /// Required: `MESSAGE`, `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    #[serde(rename = "type")]
    #[schema(required = true, nullable = false)]
    pub kind: Option<MessageType>,
    /// The text; required for `MESSAGE` (at most 10,000 characters).
    #[schema(max_length = 10000)]
    pub message: Option<String>,
    /// An http(s) URL; required for `AUDIO`, `VIDEO` and `FILE`.
    #[schema(format = "uri", max_length = 2048)]
    pub url: Option<String>,
    /// Required for `CARD`: an http(s) link.
    #[schema(format = "uri", max_length = 2048)]
    pub button_link: Option<String>,
    /// Required for `CARD` (at most 200 characters).
    #[schema(max_length = 200)]
    pub button_text: Option<String>,
}

impl MessageIn {
    /// What the document's `required` list cannot say: the fields each `type` needs
    /// (JSON Schema `if`/`then`, checked by [`validate_content`]).
    pub fn schema_conditions() -> serde_json::Value {
        content_conditions(false)
    }
}

/// The per-type requirements of a message's content, as JSON Schema conditions. With
/// `type_defaults`, an absent `type` means `MESSAGE` (the widget's rule).
pub fn content_conditions(type_defaults: bool) -> serde_json::Value {
    let is = |kinds: &[&str]| {
        let defaulted = type_defaults && kinds.contains(&"MESSAGE");
        let mut values: Vec<serde_json::Value> = kinds.iter().map(|k| serde_json::json!(k)).collect();
        if defaulted {
            values.push(serde_json::Value::Null);
        }
        let mut cond = serde_json::json!({"properties": {"type": {"enum": values}}});
        if !defaulted {
            cond["required"] = serde_json::json!(["type"]);
        }
        cond
    };
    let text = serde_json::json!({"type": "string", "pattern": "\\S"});
    serde_json::json!([
        {"if": is(&["MESSAGE"]), "then": {"required": ["message"], "properties": {"message": text}}},
        {"if": is(&["AUDIO", "VIDEO", "FILE"]), "then": {"required": ["url"], "properties": {"url": {"type": "string"}}}},
        {"if": is(&["CARD"]), "then": {"required": ["buttonText", "buttonLink"],
            "properties": {"buttonText": text, "buttonLink": {"type": "string"}}}},
    ])
}

/// A message's validated content.
pub(crate) struct Content {
    pub(crate) kind: MessageType,
    pub(crate) message: Option<String>,
    pub(crate) url: Option<String>,
    pub(crate) button_text: Option<String>,
    pub(crate) button_link: Option<String>,
}

/// Checks a message's content per type; fields are named as in spec 2.3.
pub(crate) fn validate_content(
    checks: &mut Checks,
    kind: Option<MessageType>,
    message: Option<&str>,
    url: Option<&str>,
    button_text: Option<&str>,
    button_link: Option<&str>,
) -> Content {
    let Some(kind) = kind else {
        checks.push("type", "required", "type is required");
        return Content {
            kind: MessageType::Message,
            message: None,
            url: None,
            button_text: None,
            button_link: None,
        };
    };
    let message = match kind {
        MessageType::Message => Some(checks.required_text("message", message, 10_000)),
        _ => checks.optional_text("message", message, 10_000),
    };
    let url = match kind {
        MessageType::Audio | MessageType::Video | MessageType::File => {
            let url = checks.required_text("url", url, 2048);
            if !url.is_empty() {
                checks.http_url("url", &url);
            }
            Some(url)
        }
        _ => {
            let url = checks.optional_text("url", url, 2048);
            if let Some(u) = &url {
                checks.http_url("url", u);
            }
            url
        }
    };
    let (button_text, button_link) = if kind == MessageType::Card {
        let text = checks.required_text("buttonText", button_text, 200);
        let link = checks.required_text("buttonLink", button_link, 2048);
        if !link.is_empty() {
            checks.http_url("buttonLink", &link);
        }
        (Some(text), Some(link))
    } else {
        (None, None)
    };
    Content {
        kind,
        message,
        url,
        button_text,
        button_link,
    }
}

#[derive(sqlx::FromRow)]
struct MessageRow {
    id: MessageId,
    customer_id: CustomerId,
    external_id: Option<String>,
    direction: String,
    r#type: String,
    message: Option<String>,
    url: Option<String>,
    button_text: Option<String>,
    button_link: Option<String>,
    channel: String,
    sender_kind: String,
    sender_id: Option<String>,
    created_at: i64,
    delivered_at: Option<i64>,
}

impl From<MessageRow> for Message {
    fn from(r: MessageRow) -> Self {
        Message {
            id: r.id,
            customer_id: r.customer_id,
            external_id: r.external_id,
            direction: if r.direction == "INBOUND" {
                Direction::Inbound
            } else {
                Direction::Outbound
            },
            kind: MessageType::parse(&r.r#type),
            message: r.message,
            url: r.url,
            button_text: r.button_text,
            button_link: r.button_link,
            channel: Channel::parse(&r.channel),
            sender_type: ActorKind::parse(&r.sender_kind),
            sender_id: r.sender_id,
            created_at: from_ms(r.created_at),
            delivered_at: r.delivered_at.map(from_ms),
        }
    }
}

const MESSAGE_COLUMNS: &str = "m.id, m.customer_id, c.external_id, m.direction, m.type, m.message, m.url, \
     m.button_text, m.button_link, m.channel, m.sender_kind, m.sender_id, m.created_at, m.delivered_at";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CoreError;

    #[test]
    fn content_rules_per_type() {
        let check = |kind, message: Option<&str>, url: Option<&str>, text: Option<&str>, link: Option<&str>| {
            let mut checks = Checks::new();
            validate_content(&mut checks, kind, message, url, text, link);
            match checks.finish() {
                Ok(()) => vec![],
                Err(CoreError::Validation(errors)) => errors.into_iter().map(|e| e.field).collect::<Vec<_>>(),
                Err(e) => panic!("{e}"),
            }
        };
        assert_eq!(check(None, Some("hi"), None, None, None), ["type"]);
        assert!(check(Some(MessageType::Message), Some("hi"), None, None, None).is_empty());
        assert_eq!(
            check(Some(MessageType::Message), Some("  "), None, None, None),
            ["message"]
        );
        for media in [MessageType::Audio, MessageType::Video, MessageType::File] {
            assert_eq!(check(Some(media), None, None, None, None), ["url"]);
            assert_eq!(check(Some(media), None, Some("ftp://x/y"), None, None), ["url"]);
            assert!(check(Some(media), None, Some("https://cdn.example.com/a.mp3"), None, None).is_empty());
        }
        assert_eq!(
            check(Some(MessageType::Card), None, None, None, None),
            ["buttonText", "buttonLink"]
        );
        assert_eq!(
            check(
                Some(MessageType::Card),
                None,
                None,
                Some("Open"),
                Some("javascript:alert(1)")
            ),
            ["buttonLink"]
        );
        assert!(check(
            Some(MessageType::Card),
            None,
            None,
            Some("Open"),
            Some("https://example.com")
        )
        .is_empty());
    }
}
