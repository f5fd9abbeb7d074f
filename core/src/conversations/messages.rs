//! Messages (spec 2.3): what is sent to a customer and what a customer sends, per
//! type, and the history of a conversation.

use serde::{Deserialize, Serialize};

use super::{lock_conversation, Trigger};
use crate::{
    audit::{self, Actor, ActorKind},
    customers::CustomerIn,
    db::Tx,
    error::{CoreError, CoreResult},
    events::{self, EventType},
    live::LiveEvent,
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
    /// A routing rule: a system message or a flow (`senderType` `system`).
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
    pub id: String,
    /// The customer the conversation belongs to.
    pub customer_id: String,
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
    id: String,
    customer_id: String,
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

impl Services {
    /// Resolves spec 2.3's `customerId` / `isExternalId` pair to a customer id.
    async fn resolve_message_customer(
        &self,
        tenant_id: &str,
        input: &MessageIn,
        checks: &mut Checks,
    ) -> Option<String> {
        let id = checks.required_text("customerId", input.customer_id.as_deref(), 200);
        let Some(external) = input.is_external_id else {
            checks.push("isExternalId", "required", "isExternalId is required");
            return None;
        };
        if id.is_empty() {
            return None;
        }
        if external {
            match self.find_customer_by_external_id(tenant_id, &id).await {
                Ok(c) => Some(c.id),
                Err(_) => None,
            }
        } else {
            Some(id)
        }
    }

    /// Sends a message to a customer (spec 2.3): stored, queued as `message.sent`,
    /// pushed to the customer's open widget, and otherwise kept until the widget
    /// fetches it.
    pub async fn send_message(
        &self,
        tenant_id: &str,
        input: MessageIn,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let mut checks = Checks::new();
        let customer = self.resolve_message_customer(tenant_id, &input, &mut checks).await;
        let content = validate_content(
            &mut checks,
            input.kind,
            input.message.as_deref(),
            input.url.as_deref(),
            input.button_text.as_deref(),
            input.button_link.as_deref(),
        );
        checks.finish()?;
        let customer_id = customer.ok_or(CoreError::NotFound("customer"))?;
        let mut tx = self.db().begin().await?;
        let from = lock_conversation(&mut tx, tenant_id, &customer_id).await?;
        let message = self
            .send_in(&mut tx, tenant_id, &customer_id, from, content, channel, actor)
            .await?;
        self.commit_live(tx, tenant_id, &customer_id, LiveEvent::Message(message.clone()))
            .await?;
        Ok(message)
    }

    /// Stores a message to a customer in `tx`, whose conversation the caller locked
    /// (it had status `from`): queued as `message.sent` and audited; the caller
    /// publishes it live after the commit.
    ///
    /// A person's or an integration's message answers the customer: the status moves
    /// (`UNREAD` → `UNRESOLVED`), the response times are measured, and the SLA clocks
    /// and `NO_ANSWER` timers stop. A message of the system (a routing rule's system
    /// message or flow, `Channel::Automation`) is only stored and counted: it answers
    /// nobody.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn send_in(
        &self,
        tx: &mut Tx,
        tenant_id: &str,
        customer_id: &str,
        from: super::ConversationStatus,
        content: Content,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let message = self
            .insert_message(tx, tenant_id, customer_id, Direction::Outbound, content, channel, actor)
            .await?;
        let answers = channel != Channel::Automation;
        if answers {
            // Stored first, then moved: the status events carry it as `lastMessage`.
            self.finish_trigger(tx, tenant_id, customer_id, from, Trigger::Reply, actor)
                .await?;
            facts::message_stored(
                tx,
                tenant_id,
                customer_id,
                false,
                message.kind.as_str(),
                actor.user_id(),
            )
            .await?;
            crate::engine::dispatch::answered(tx, tenant_id, customer_id).await?;
        } else {
            facts::message_counted(tx, tenant_id, customer_id, message.kind.as_str()).await?;
        }
        events::enqueue(
            tx,
            tenant_id,
            actor,
            EventType::MessageSent,
            Some(customer_id),
            &message,
        )
        .await?;
        audit::record(
            tx,
            Some(tenant_id),
            actor,
            "message.send",
            "customer",
            Some(customer_id),
        )
        .await?;
        Ok(message)
    }

    /// Records a message a channel integration received from a customer. With
    /// `isExternalId`, an unknown external id creates the customer (which fires
    /// `customer.created` and `conversation.created`).
    pub async fn receive_message(&self, tenant_id: &str, input: MessageIn, actor: &Actor) -> CoreResult<Message> {
        let mut checks = Checks::new();
        let customer = self.resolve_message_customer(tenant_id, &input, &mut checks).await;
        let content = validate_content(
            &mut checks,
            input.kind,
            input.message.as_deref(),
            input.url.as_deref(),
            input.button_text.as_deref(),
            input.button_link.as_deref(),
        );
        checks.finish()?;
        let customer_id = match (customer, input.is_external_id) {
            (Some(id), _) => id,
            (None, Some(true)) => {
                let created = self
                    .save_customer(
                        tenant_id,
                        CustomerIn {
                            external_id: input.customer_id.clone(),
                            ..CustomerIn::default()
                        },
                        actor,
                    )
                    .await;
                match created {
                    Ok(c) => c.id,
                    // Created by a concurrent request with the same external id.
                    Err(CoreError::Conflict { .. }) => {
                        self.find_customer_by_external_id(tenant_id, input.customer_id.as_deref().unwrap_or(""))
                            .await?
                            .id
                    }
                    Err(e) => return Err(e),
                }
            }
            (None, _) => return Err(CoreError::NotFound("customer")),
        };
        self.record_inbound(tenant_id, &customer_id, content, Channel::Api, actor)
            .await
    }

    /// Stores a customer's message: the conversation moves to `UNREAD` and
    /// `message.received` is queued.
    pub(crate) async fn record_inbound(
        &self,
        tenant_id: &str,
        customer_id: &str,
        content: Content,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let mut tx = self.db().begin().await?;
        let from = lock_conversation(&mut tx, tenant_id, customer_id).await?;
        let message = self
            .insert_message(
                &mut tx,
                tenant_id,
                customer_id,
                Direction::Inbound,
                content,
                channel,
                actor,
            )
            .await?;
        self.finish_trigger(&mut tx, tenant_id, customer_id, from, Trigger::CustomerMessage, actor)
            .await?;
        // Read after the move (a reopened conversation's clock restarts) and before
        // the message is counted: whether this message starts a wait.
        let waiting_before = facts::awaiting_since(&mut tx, tenant_id, customer_id).await?;
        facts::message_stored(&mut tx, tenant_id, customer_id, true, message.kind.as_str(), None).await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::MessageReceived,
            Some(customer_id),
            &message,
        )
        .await?;
        let effects = self
            .on_customer_message(&mut tx, tenant_id, customer_id, from, waiting_before)
            .await?;
        let event = LiveEvent::Message(message.clone());
        self.announce_live(&mut tx, tenant_id, customer_id, &event).await?;
        effects.announce(self, &mut tx, tenant_id).await?;
        crate::engine::watchdogs::message_received(&mut tx, tenant_id, &message).await?;
        tx.commit().await?;
        self.after_commit(tenant_id, customer_id, event);
        effects.publish(self, tenant_id);
        Ok(message)
    }

    #[allow(clippy::too_many_arguments)]
    async fn insert_message(
        &self,
        tx: &mut Tx,
        tenant_id: &str,
        customer_id: &str,
        direction: Direction,
        content: Content,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let id = uuid::Uuid::now_v7().to_string();
        let now = now_ms();
        with_tx!(tx, |conn| sqlx::query(
            "insert into messages (id, tenant_id, customer_id, direction, type, message, url, button_text, \
             button_link, channel, sender_kind, sender_id, created_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(customer_id)
        .bind(if direction == Direction::Inbound {
            "INBOUND"
        } else {
            "OUTBOUND"
        })
        .bind(content.kind.as_str())
        .bind(&content.message)
        .bind(&content.url)
        .bind(&content.button_text)
        .bind(&content.button_link)
        .bind(channel.as_str())
        .bind(actor.kind.as_str())
        .bind(&actor.id)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        with_tx!(tx, |conn| sqlx::query(
            "update customers set last_message_at = $3 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let sql = format!(
            "select {MESSAGE_COLUMNS} from messages m join customers c on c.id = m.customer_id where m.id = $1"
        );
        let row: MessageRow = with_tx!(tx, |conn| sqlx::query_as(&sql).bind(&id).fetch_one(conn).await)?;
        Ok(row.into())
    }

    /// One message of the tenant.
    pub(crate) async fn get_message(&self, tenant_id: &str, id: &str) -> CoreResult<Message> {
        let sql = format!(
            "select {MESSAGE_COLUMNS} from messages m join customers c on c.id = m.customer_id \
             where m.tenant_id = $1 and m.id = $2"
        );
        let row: Option<MessageRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.ok_or(CoreError::NotFound("message"))?.into())
    }

    /// A page of a customer's messages, newest first.
    pub async fn list_messages(
        &self,
        tenant_id: &str,
        customer_id: &str,
        page: &PageRequest,
    ) -> CoreResult<Page<Message>> {
        let paging = Paging::from_request(page)?;
        self.get_customer(tenant_id, customer_id).await?;
        let count_sql = "select count(*) from messages where tenant_id = $1 and customer_id = $2";
        let sql = format!(
            "select {MESSAGE_COLUMNS} from messages m join customers c on c.id = m.customer_id \
             where m.tenant_id = $1 and m.customer_id = $2 order by m.created_at desc, m.id desc limit $3 offset $4"
        );
        let (total, rows): (i64, Vec<MessageRow>) = with_db!(self.db(), |pool| {
            let total: i64 = sqlx::query_scalar(count_sql)
                .bind(tenant_id)
                .bind(customer_id)
                .fetch_one(pool)
                .await?;
            let rows = sqlx::query_as(&sql)
                .bind(tenant_id)
                .bind(customer_id)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(pool)
                .await?;
            Ok::<_, sqlx::Error>((total, rows))
        })?;
        Ok(paging.page(total, rows.into_iter().map(Message::from).collect()))
    }

    /// Marks outbound messages as received by the customer's widget.
    pub async fn mark_delivered(&self, tenant_id: &str, customer_id: &str, ids: &[&str]) -> CoreResult<()> {
        let sql = format!(
            "update messages set delivered_at = $3 where tenant_id = $1 and customer_id = $2 \
             and delivered_at is null and id in ({})",
            crate::db::placeholders(4, ids.len())
        );
        with_db!(self.writer(), |pool| {
            let mut q = sqlx::query(&sql).bind(tenant_id).bind(customer_id).bind(now_ms());
            for id in ids {
                q = q.bind(*id);
            }
            q.execute(pool).await.map(|r| r.rows_affected())
        })?;
        Ok(())
    }
}

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
