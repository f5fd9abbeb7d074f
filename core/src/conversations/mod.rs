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
//!
//! Submodules: [`messages`] (sending, receiving, history), [`inbox`] (the agents'
//! conversation list), [`widget`] (the visitor widget's identity and messages)
//! and [`forms`] (visitors' contact forms, stored as their messages);
//! [`notes`] (agents' private notes, with mentions); [`read_marks`] (how far each side has read), [`typing`] (live typing
//! signals, never stored), [`transcripts`] (the conversation by mail) and
//! [`replies_by_mail`] (replies to visitors who have left).

pub(crate) mod csat;
mod forms;
mod inbox;
mod messages;
pub(crate) mod notes;
mod read_marks;
pub(crate) mod replies_by_mail;
mod transcripts;
mod typing;
mod widget;

pub use csat::{Csat, CsatIn, CsatPrompt};
pub(crate) use forms::read_form;
pub use forms::FormIn;
pub use inbox::{customer_name, InboxCounts, InboxItem};
pub use messages::{Channel, Direction, Message, MessageIn, MessageType};
pub use notes::{mentioned_names, mentioned_users, Note, NoteIn, MAX_NOTE};
pub use read_marks::{ReadIn, ReadState, Reader};
pub use replies_by_mail::{ContinueLink, CONTINUE_LINK_DAYS};
pub use transcripts::{TranscriptIn, TranscriptQueued, TRANSCRIPT_EVERY_MS};
pub use typing::{AgentTypingIn, VisitorTypingIn, MAX_DRAFT, MAX_TYPIST_NAME};
// Flows (`config::flows`) hold message contents: checked and sent as messages are.
pub(crate) use messages::{content_conditions, validate_content, Content};
pub use widget::{
    new_widget_key, VisitorIdentity, VisitorIn, VisitorProfile, VisitorProfileIn, VisitorTags, VisitorTagsIn,
    WidgetConfig, WidgetMessageIn,
};

use serde::{Deserialize, Serialize};

use crate::{
    audit::Actor,
    db::{TenantTable, Tx},
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{CustomerId, TenantId, UserId},
    model::{Page, PageRequest},
    reports::facts,
    time::now_ms,
    validate::Paging,
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
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// `UNREAD`, `DONE` or `UNRESOLVED`.
    pub status: ConversationStatus,
    /// The last message, either direction.
    pub last_message: LastMessage,
    /// The conversation in the dashboard.
    pub url: String,
    /// The visitor's rating of this conversation: only while it is `DONE` and
    /// once rated (a reopened conversation is a new one). Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub csat: Option<Csat>,
    /// The visitor has seen every message created up to this time (their
    /// widget was open and shown); absent until they have seen one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub visitor_read_at: Option<chrono::DateTime<chrono::Utc>>,
    /// An agent has seen every message created up to this time; absent until
    /// one has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub agent_read_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A status to set.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusIn {
    /// `UNREAD`, `DONE` or `UNRESOLVED` (required).
    #[schema(required = true, nullable = false)]
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

/// What a Conversation object is read from: the customer's status and read
/// marks, the text of the last message, and the rating of the current closing
/// (see [`csat`]).
const CONVERSATION_COLUMNS: &str = "c.id, c.status, c.visitor_read_at, c.agent_read_at, \
       (select coalesce(m.message, m.url, m.button_text) from messages m \
          where m.tenant_id = c.tenant_id and m.customer_id = c.id order by m.created_at desc, m.id desc limit 1) \
          as last_text, \
       r.rating, r.comment, r.user_id as rated_user_id, r.closed_at, r.created_at as rated_at \
     from customers c left join csat_ratings r on c.status = 'DONE' and r.tenant_id = c.tenant_id \
       and r.customer_id = c.id and r.closed_at = c.status_changed_at";

/// A conversation, as [`CONVERSATION_COLUMNS`] reads it.
#[derive(sqlx::FromRow)]
struct ConversationRow {
    id: CustomerId,
    status: String,
    visitor_read_at: Option<i64>,
    agent_read_at: Option<i64>,
    last_text: Option<String>,
    rating: Option<i64>,
    comment: Option<String>,
    rated_user_id: Option<UserId>,
    closed_at: Option<i64>,
    rated_at: Option<i64>,
}

/// One customer's conversation.
fn conversation_sql() -> String {
    format!("select {CONVERSATION_COLUMNS} where c.tenant_id = $1 and c.id = $2")
}

/// A page of conversations, most recently active first.
fn conversation_page_sql() -> String {
    format!(
        "select {CONVERSATION_COLUMNS} where c.tenant_id = $1 and ($2 is null or c.status = $2) \
         order by coalesce(c.last_message_at, c.created_at) desc, c.id desc limit $3 offset $4"
    )
}

/// Locks a customer's row for the rest of `tx` and returns its status; `NotFound`
/// when the tenant has no such customer.
pub(crate) async fn lock_conversation(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
) -> CoreResult<ConversationStatus> {
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
    let (status,): (String,) = TenantTable::new("customers", "customer")
        .read_in(tx, tenant_id, customer_id, "status")
        .await?;
    Ok(ConversationStatus::parse(&status).unwrap_or(ConversationStatus::Unread))
}

impl Services {
    /// The Conversation object of a customer, read inside `tx`.
    pub(crate) async fn conversation_in(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
    ) -> CoreResult<Conversation> {
        let sql = conversation_sql();
        let row: Option<ConversationRow> = with_tx!(tx, |conn| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(customer_id)
            .fetch_optional(conn)
            .await)?;
        Ok(self.conversation_from(row.ok_or(CoreError::NotFound("customer"))?))
    }

    fn conversation_from(&self, row: ConversationRow) -> Conversation {
        let text = row.last_text.unwrap_or_default();
        let csat = match (row.rating, row.closed_at, row.rated_at) {
            (Some(rating), Some(closed_at), Some(rated_at)) => Some(csat::csat_of((
                rating,
                row.comment,
                row.rated_user_id,
                closed_at,
                rated_at,
            ))),
            _ => None,
        };
        let read = ReadState::of(row.visitor_read_at, row.agent_read_at);
        Conversation {
            url: format!("{}/inbox/{}", self.public_url(), row.id),
            customer_id: row.id,
            status: ConversationStatus::parse(&row.status).unwrap_or(ConversationStatus::Unread),
            last_message: LastMessage {
                test: text.clone(),
                text,
            },
            csat,
            visitor_read_at: read.visitor_read_at,
            agent_read_at: read.agent_read_at,
        }
    }

    /// Locks a conversation and moves it by `trigger` (see [`Services::finish_trigger`]).
    pub(crate) async fn apply_trigger(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        trigger: Trigger,
        actor: &Actor,
    ) -> CoreResult<(ConversationStatus, ConversationStatus)> {
        let from = lock_conversation(tx, tenant_id, customer_id).await?;
        self.finish_trigger(tx, tenant_id, customer_id, from, trigger, actor)
            .await
    }

    /// Moves a conversation locked with status `from` by `trigger`, writing the new
    /// status and queuing the events of the change. Returns the status before and after.
    pub(crate) async fn finish_trigger(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
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
                match event {
                    EventType::ConversationCreated => {
                        facts::conversation_started(tx, tenant_id, customer_id, actor.user_id()).await?
                    }
                    EventType::ConversationStatusChanged => {
                        facts::status_changed(tx, tenant_id, customer_id, to.as_str(), actor.user_id()).await?
                    }
                    _ => {}
                }
            }
        }
        Ok((from, to))
    }

    /// The conversation of a customer.
    pub async fn get_conversation(&self, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<Conversation> {
        let sql = conversation_sql();
        let row: Option<ConversationRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(customer_id)
            .fetch_optional(pool)
            .await)?;
        Ok(self.conversation_from(row.ok_or(CoreError::NotFound("customer"))?))
    }

    /// A page of conversations, the most recently active first.
    pub async fn list_conversations(
        &self,
        tenant_id: &TenantId,
        filter: &ConversationFilter,
        page: &PageRequest,
    ) -> CoreResult<Page<Conversation>> {
        let paging = Paging::from_request(page)?;
        let status = filter.status.map(ConversationStatus::as_str);
        let count_sql = "select count(*) from customers where tenant_id = $1 and ($2 is null or status = $2)";
        let (total, rows): (i64, Vec<ConversationRow>) = crate::db::page(
            self.db(),
            count_sql,
            &conversation_page_sql(),
            &[tenant_id.into(), status.into()],
            &paging,
        )
        .await?;
        Ok(paging.page(total, rows.into_iter().map(|r| self.conversation_from(r)).collect()))
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
}
