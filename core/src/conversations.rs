//! Conversations and messages (spec 2.2, 2.3 and 3).
//!
//! A customer *is* the conversation: its status lives on the customer row. The rules
//! (spec 3 plus what the spec leaves open, decided here):
//!
//! | Operation | From | To |
//! |---|---|---|
//! | customer created (REST, widget, inbound channel) | — | `UNREAD` |
//! | a customer message arrives (widget or inbound REST) | any | `UNREAD` |
//! | an agent or the API sends a message | `UNREAD` | `UNRESOLVED` |
//! | an agent or the API sends a message | `UNRESOLVED`, `DONE` | unchanged |
//! | an agent or the API sets the status | any | the given status |
//! | the customer is assigned, reassigned or unassigned | any | unchanged |
//!
//! Events: creating a customer fires `conversation.created`. Every change of status
//! fires `conversation.status_changed`; a change from `DONE` to `UNREAD` fires
//! `conversation.created` first. Setting the status a conversation already has
//! changes nothing and fires nothing.
//!
//! Concurrency: every operation that can move the status locks the customer row
//! first (its first statement is a write, which on SQLite also takes the database's
//! write lock), then reads the status, decides, and writes, all in one transaction.
//! Two agents acting at once are therefore serialised, and each fires exactly the
//! events of the change it made.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor, ActorKind},
    crypto::{random_token, token_digest},
    customers::{Customer, CustomerIn},
    db::Tx,
    error::{CoreError, CoreResult},
    events::{self, EventType},
    live::LiveEvent,
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_db, with_tx, Services,
};

/// A conversation's status (spec 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConversationStatus {
    /// New activity from the customer that nobody has answered yet. The initial status.
    Unread,
    /// Finished.
    Done,
    /// Answered but not finished.
    Unresolved,
}

impl ConversationStatus {
    /// Every status.
    pub const ALL: [ConversationStatus; 3] = [
        ConversationStatus::Unread,
        ConversationStatus::Done,
        ConversationStatus::Unresolved,
    ];

    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ConversationStatus::Unread => "UNREAD",
            ConversationStatus::Done => "DONE",
            ConversationStatus::Unresolved => "UNRESOLVED",
        }
    }

    /// Parses a wire value.
    pub fn parse(s: &str) -> Option<ConversationStatus> {
        ConversationStatus::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// What happens to a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A message from the customer arrives.
    CustomerMessage,
    /// An agent or the API sends a message to the customer.
    Reply,
    /// An agent or the API sets the status.
    Set(ConversationStatus),
}

/// The status after `trigger` (see the module's table).
pub fn next_status(current: ConversationStatus, trigger: Trigger) -> ConversationStatus {
    match trigger {
        Trigger::CustomerMessage => ConversationStatus::Unread,
        Trigger::Reply if current == ConversationStatus::Unread => ConversationStatus::Unresolved,
        Trigger::Reply => current,
        Trigger::Set(status) => status,
    }
}

/// The events a move from `from` to `to` fires, in order.
pub fn transition_events(from: ConversationStatus, to: ConversationStatus) -> Vec<EventType> {
    match (from, to) {
        (a, b) if a == b => vec![],
        (ConversationStatus::Done, ConversationStatus::Unread) => {
            vec![EventType::ConversationCreated, EventType::ConversationStatusChanged]
        }
        _ => vec![EventType::ConversationStatusChanged],
    }
}

/// The last message of a conversation, as spec 2.2 names it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct LastMessage {
    /// The text of the last message (the spec's field name, kept as written). For
    /// a message without text, its URL; empty when there is no message yet.
    pub test: String,
    /// The same text under the name the spec evidently means.
    pub text: String,
}

/// The Conversation object (spec 2.2): the body of `conversation.created` and
/// `conversation.status_changed`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"customerId": "0190c3d2-8c1e-7b7a-9f1e-3f2a1b0c9d8e", "status": "UNREAD", "lastMessage": {"test": "Where is my order?", "text": "Where is my order?"}, "url": "https://rapport.example.com/inbox/0190c3d2-8c1e-7b7a-9f1e-3f2a1b0c9d8e"}))]
pub struct Conversation {
    /// The customer, whose conversation this is.
    pub customer_id: String,
    /// `UNREAD`, `DONE` or `UNRESOLVED`.
    pub status: ConversationStatus,
    /// The last message, either direction.
    pub last_message: LastMessage,
    /// The conversation in the dashboard.
    pub url: String,
}

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

    fn as_str(self) -> &'static str {
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Channel {
    /// The visitor widget.
    Widget,
    /// The REST API (an integration).
    Api,
    /// The agents' dashboard.
    Dashboard,
}

impl Channel {
    fn as_str(self) -> &'static str {
        match self {
            Channel::Widget => "WIDGET",
            Channel::Api => "API",
            Channel::Dashboard => "DASHBOARD",
        }
    }

    fn parse(s: &str) -> Channel {
        match s {
            "WIDGET" => Channel::Widget,
            "DASHBOARD" => Channel::Dashboard,
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
    pub customer_id: Option<String>,
    /// Required: whether `customerId` is an external id.
    pub is_external_id: Option<bool>,
    /// Required: `MESSAGE`, `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    #[serde(rename = "type")]
    pub kind: Option<MessageType>,
    /// The text; required for `MESSAGE` (at most 10,000 characters).
    pub message: Option<String>,
    /// An http(s) URL; required for `AUDIO`, `VIDEO` and `FILE`.
    pub url: Option<String>,
    /// Required for `CARD`: an http(s) link.
    pub button_link: Option<String>,
    /// Required for `CARD` (at most 200 characters).
    pub button_text: Option<String>,
}

/// What a visitor sends through the widget: the content part of [`MessageIn`].
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetMessageIn {
    /// `MESSAGE` (default), `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    #[serde(rename = "type")]
    pub kind: Option<MessageType>,
    /// The text.
    pub message: Option<String>,
    /// An http(s) URL, for media.
    pub url: Option<String>,
}

/// A status to set.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusIn {
    /// `UNREAD`, `DONE` or `UNRESOLVED`.
    pub status: Option<ConversationStatus>,
}

/// Filters of the conversation list.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct ConversationFilter {
    /// Only conversations with this status.
    pub status: Option<ConversationStatus>,
}

/// What the widget learns when a visitor starts: who it is, and the secret that
/// proves it on later requests.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VisitorIdentity {
    /// The customer the visitor is.
    pub customer_id: String,
    /// Bearer token of this visitor (shown once; store it in the browser).
    pub visitor_token: String,
}

/// A new per-tenant widget key (public: it names the tenant to the widget).
pub fn new_widget_key() -> String {
    format!("wk_{}", uuid::Uuid::new_v4().simple())
}

struct Content {
    kind: MessageType,
    message: Option<String>,
    url: Option<String>,
    button_text: Option<String>,
    button_link: Option<String>,
}

/// Checks a message's content per type; fields are named as in spec 2.3.
fn validate_content(
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

/// A conversation's status and last message text.
const CONVERSATION_SQL: &str = "select c.status, \
       (select coalesce(m.message, m.url, m.button_text) from messages m \
          where m.tenant_id = c.tenant_id and m.customer_id = c.id order by m.created_at desc, m.id desc limit 1) \
     from customers c where c.tenant_id = $1 and c.id = $2";

/// Locks a customer's row for the rest of `tx` and returns its status; `NotFound`
/// when the tenant has no such customer.
async fn lock_conversation(tx: &mut Tx, tenant_id: &str, customer_id: &str) -> CoreResult<ConversationStatus> {
    // A write first: PostgreSQL locks the row, SQLite takes its write lock, so the
    // read below cannot go stale before this transaction commits.
    let touched = with_tx!(tx, |conn| sqlx::query(
        "update customers set status = status where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    if touched == 0 {
        return Err(CoreError::NotFound("customer"));
    }
    let status: String = with_tx!(tx, |conn| sqlx::query_scalar(
        "select status from customers where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .fetch_one(conn)
    .await)?;
    Ok(ConversationStatus::parse(&status).unwrap_or(ConversationStatus::Unread))
}

impl Services {
    /// The Conversation object of a customer, read inside `tx`.
    pub(crate) async fn conversation_in(
        &self,
        tx: &mut Tx,
        tenant_id: &str,
        customer_id: &str,
    ) -> CoreResult<Conversation> {
        let row: Option<(String, Option<String>)> = with_tx!(tx, |conn| sqlx::query_as(CONVERSATION_SQL)
            .bind(tenant_id)
            .bind(customer_id)
            .fetch_optional(conn)
            .await)?;
        self.conversation_from(customer_id, row)
    }

    fn conversation_from(&self, customer_id: &str, row: Option<(String, Option<String>)>) -> CoreResult<Conversation> {
        let (status, text) = row.ok_or(CoreError::NotFound("customer"))?;
        let text = text.unwrap_or_default();
        Ok(Conversation {
            customer_id: customer_id.to_string(),
            status: ConversationStatus::parse(&status).unwrap_or(ConversationStatus::Unread),
            last_message: LastMessage {
                test: text.clone(),
                text,
            },
            url: format!("{}/inbox/{}", self.public_url(), customer_id),
        })
    }

    /// Locks a conversation and moves it by `trigger` (see [`Services::finish_trigger`]).
    async fn apply_trigger(
        &self,
        tx: &mut Tx,
        tenant_id: &str,
        customer_id: &str,
        trigger: Trigger,
        actor: &Actor,
    ) -> CoreResult<(ConversationStatus, ConversationStatus)> {
        let from = lock_conversation(tx, tenant_id, customer_id).await?;
        self.finish_trigger(tx, tenant_id, customer_id, from, trigger, actor)
            .await
    }

    /// Moves a conversation locked with status `from` by `trigger`, writing the new
    /// status and queuing the events of the change. Returns the status before and after.
    async fn finish_trigger(
        &self,
        tx: &mut Tx,
        tenant_id: &str,
        customer_id: &str,
        from: ConversationStatus,
        trigger: Trigger,
        actor: &Actor,
    ) -> CoreResult<(ConversationStatus, ConversationStatus)> {
        let to = next_status(from, trigger);
        let fired = transition_events(from, to);
        if !fired.is_empty() {
            with_tx!(tx, |conn| sqlx::query(
                "update customers set status = $3, status_changed_at = $4 where tenant_id = $1 and id = $2"
            )
            .bind(tenant_id)
            .bind(customer_id)
            .bind(to.as_str())
            .bind(now_ms())
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
            let conversation = self.conversation_in(tx, tenant_id, customer_id).await?;
            for event in fired {
                events::enqueue(tx, tenant_id, actor, event, Some(customer_id), &conversation).await?;
            }
        }
        Ok((from, to))
    }

    /// The conversation of a customer.
    pub async fn get_conversation(&self, tenant_id: &str, customer_id: &str) -> CoreResult<Conversation> {
        let row: Option<(String, Option<String>)> = with_db!(self.db(), |pool| sqlx::query_as(CONVERSATION_SQL)
            .bind(tenant_id)
            .bind(customer_id)
            .fetch_optional(pool)
            .await)?;
        self.conversation_from(customer_id, row)
    }

    /// A page of conversations, the most recently active first.
    pub async fn list_conversations(
        &self,
        tenant_id: &str,
        filter: &ConversationFilter,
        page: &PageRequest,
    ) -> CoreResult<Page<Conversation>> {
        let paging = Paging::from_request(page)?;
        let status = filter.status.map(ConversationStatus::as_str);
        let condition = "tenant_id = $1 and ($2 is null or status = $2)";
        let count_sql = format!("select count(*) from customers where {condition}");
        let sql = format!(
            "select id from customers where {condition} \
             order by coalesce(last_message_at, created_at) desc, id desc limit $3 offset $4"
        );
        let (total, ids): (i64, Vec<String>) = with_db!(self.db(), |pool| {
            let total: i64 = sqlx::query_scalar(&count_sql)
                .bind(tenant_id)
                .bind(status)
                .fetch_one(pool)
                .await?;
            let ids = sqlx::query_scalar(&sql)
                .bind(tenant_id)
                .bind(status)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(pool)
                .await?;
            Ok::<_, sqlx::Error>((total, ids))
        })?;
        let mut results = Vec::with_capacity(ids.len());
        for id in ids {
            results.push(self.get_conversation(tenant_id, &id).await?);
        }
        Ok(paging.page(total, results))
    }

    /// Sets a conversation's status. Setting the current status again is no change and
    /// fires nothing.
    pub async fn set_conversation_status(
        &self,
        tenant_id: &str,
        customer_id: &str,
        input: StatusIn,
        actor: &Actor,
    ) -> CoreResult<Conversation> {
        let Some(status) = input.status else {
            return Err(CoreError::invalid("status", "required", "status is required"));
        };
        let mut tx = self.db().begin().await?;
        let (from, to) = self
            .apply_trigger(&mut tx, tenant_id, customer_id, Trigger::Set(status), actor)
            .await?;
        if from != to {
            audit::record(
                &mut tx,
                Some(tenant_id),
                actor,
                "conversation.status",
                "customer",
                Some(customer_id),
            )
            .await?;
        }
        let conversation = self.conversation_in(&mut tx, tenant_id, customer_id).await?;
        tx.commit().await?;
        self.after_commit(tenant_id, customer_id, LiveEvent::Conversation(conversation.clone()));
        Ok(conversation)
    }

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
        // Lock first, store the message, then move: the status events carry it as
        // `lastMessage`.
        let from = lock_conversation(&mut tx, tenant_id, &customer_id).await?;
        let message = self
            .insert_message(
                &mut tx,
                tenant_id,
                &customer_id,
                Direction::Outbound,
                content,
                channel,
                actor,
            )
            .await?;
        self.finish_trigger(&mut tx, tenant_id, &customer_id, from, Trigger::Reply, actor)
            .await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::MessageSent,
            Some(&customer_id),
            &message,
        )
        .await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "message.send",
            "customer",
            Some(&customer_id),
        )
        .await?;
        tx.commit().await?;
        self.after_commit(tenant_id, &customer_id, LiveEvent::Message(message.clone()));
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
    async fn record_inbound(
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
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::MessageReceived,
            Some(customer_id),
            &message,
        )
        .await?;
        tx.commit().await?;
        self.after_commit(tenant_id, customer_id, LiveEvent::Message(message.clone()));
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

    // --- The visitor widget ------------------------------------------------------

    /// The tenant a widget key belongs to.
    pub async fn tenant_by_widget_key(&self, widget_key: &str) -> CoreResult<String> {
        let id: Option<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from tenants where widget_key = $1"
        )
        .bind(widget_key)
        .fetch_optional(pool)
        .await)?;
        id.ok_or(CoreError::Unauthenticated)
    }

    /// The tenant's widget key.
    pub async fn widget_key(&self, tenant_id: &str) -> CoreResult<String> {
        let key: Option<Option<String>> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select widget_key from tenants where id = $1"
        )
        .bind(tenant_id)
        .fetch_optional(pool)
        .await)?;
        key.flatten().ok_or(CoreError::NotFound("tenant"))
    }

    /// Replaces the tenant's widget key; the old one stops working at once.
    pub async fn rotate_widget_key(&self, tenant_id: &str, actor: &Actor) -> CoreResult<String> {
        let key = new_widget_key();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set widget_key = $2 where id = $1"
        )
        .bind(tenant_id)
        .bind(&key)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "widget.rotate_key",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        Ok(key)
    }

    /// A new visitor of the tenant whose widget key is given: creates the customer
    /// (`customer.created`, `conversation.created`) and its visitor token.
    pub async fn start_visitor(
        &self,
        widget_key: &str,
        profile: CustomerIn,
        mut actor: Actor,
    ) -> CoreResult<(String, VisitorIdentity)> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        // A visitor may name itself, but not pick an id or an assignment.
        let profile = CustomerIn {
            id: None,
            assigned_user: None,
            assigned_team: None,
            ..profile
        };
        let customer_id = uuid::Uuid::now_v7().to_string();
        actor.kind = ActorKind::Customer;
        actor.id = customer_id.clone();
        let token = format!("vt_{}", random_token(32));
        self.create_customer_with_id(&tenant_id, &customer_id, profile, Some(&token_digest(&token)), &actor)
            .await?;
        Ok((
            tenant_id,
            VisitorIdentity {
                customer_id,
                visitor_token: token,
            },
        ))
    }

    /// The tenant and customer a widget key and visitor token stand for.
    pub async fn visitor(&self, widget_key: &str, visitor_token: &str) -> CoreResult<(String, Customer)> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        let id: Option<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from customers where tenant_id = $1 and visitor_token_hash = $2"
        )
        .bind(&tenant_id)
        .bind(token_digest(visitor_token))
        .fetch_optional(pool)
        .await)?;
        let id = id.ok_or(CoreError::Unauthenticated)?;
        let customer = self.get_customer(&tenant_id, &id).await?;
        Ok((tenant_id, customer))
    }

    /// A message a visitor writes in the widget.
    pub async fn visitor_message(
        &self,
        tenant_id: &str,
        customer_id: &str,
        input: WidgetMessageIn,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let mut checks = Checks::new();
        let content = validate_content(
            &mut checks,
            Some(input.kind.unwrap_or(MessageType::Message)),
            input.message.as_deref(),
            input.url.as_deref(),
            None,
            None,
        );
        if content.kind == MessageType::Card {
            checks.push("type", "not_allowed", "visitors cannot send cards");
        }
        checks.finish()?;
        self.record_inbound(tenant_id, customer_id, content, Channel::Widget, actor)
            .await
    }

    /// The visitor's conversation, newest first; marks the outbound messages on the
    /// page as delivered, since the widget now has them.
    pub async fn visitor_messages(
        &self,
        tenant_id: &str,
        customer_id: &str,
        page: &PageRequest,
    ) -> CoreResult<Page<Message>> {
        let page = self.list_messages(tenant_id, customer_id, page).await?;
        let undelivered: Vec<&str> = page
            .results
            .iter()
            .filter(|m| m.direction == Direction::Outbound && m.delivered_at.is_none())
            .map(|m| m.id.as_str())
            .collect();
        if !undelivered.is_empty() {
            self.mark_delivered(tenant_id, customer_id, &undelivered).await?;
        }
        Ok(page)
    }

    /// Marks outbound messages as received by the customer's widget.
    pub async fn mark_delivered(&self, tenant_id: &str, customer_id: &str, ids: &[&str]) -> CoreResult<()> {
        let sql = format!(
            "update messages set delivered_at = $3 where tenant_id = $1 and customer_id = $2 \
             and delivered_at is null and id in ({})",
            crate::db::placeholders(4, ids.len())
        );
        with_db!(self.db(), |pool| {
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
    use ConversationStatus::*;
    use EventType::*;

    /// Every status crossed with every trigger: the status it ends in and the events
    /// it fires.
    #[test]
    fn every_transition_and_its_events() {
        let table: &[(ConversationStatus, Trigger, ConversationStatus, &[EventType])] = &[
            (Unread, Trigger::CustomerMessage, Unread, &[]),
            (
                Done,
                Trigger::CustomerMessage,
                Unread,
                &[ConversationCreated, ConversationStatusChanged],
            ),
            (
                Unresolved,
                Trigger::CustomerMessage,
                Unread,
                &[ConversationStatusChanged],
            ),
            (Unread, Trigger::Reply, Unresolved, &[ConversationStatusChanged]),
            (Done, Trigger::Reply, Done, &[]),
            (Unresolved, Trigger::Reply, Unresolved, &[]),
            (Unread, Trigger::Set(Unread), Unread, &[]),
            (Unread, Trigger::Set(Done), Done, &[ConversationStatusChanged]),
            (
                Unread,
                Trigger::Set(Unresolved),
                Unresolved,
                &[ConversationStatusChanged],
            ),
            (
                Done,
                Trigger::Set(Unread),
                Unread,
                &[ConversationCreated, ConversationStatusChanged],
            ),
            (Done, Trigger::Set(Done), Done, &[]),
            (Done, Trigger::Set(Unresolved), Unresolved, &[ConversationStatusChanged]),
            (Unresolved, Trigger::Set(Unread), Unread, &[ConversationStatusChanged]),
            (Unresolved, Trigger::Set(Done), Done, &[ConversationStatusChanged]),
            (Unresolved, Trigger::Set(Unresolved), Unresolved, &[]),
        ];
        // The table covers every (status, trigger) pair.
        assert_eq!(table.len(), 3 * 5);
        for (from, trigger, to, fired) in table {
            let next = next_status(*from, *trigger);
            assert_eq!(next, *to, "{from:?} + {trigger:?}");
            assert_eq!(transition_events(*from, next), fired.to_vec(), "{from:?} + {trigger:?}");
        }
    }

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
