//! The agents' inbox: conversations of one status with who they are, who has
//! them and how many customer messages wait for an answer, plus the count per
//! status for the tabs.
//!
//! "Waiting" is the number of the customer's messages after the last message
//! sent to them: what an agent has not answered yet. It is computed on read
//! from the messages (by `messages_customer_idx`), so it can never drift from
//! the thread it summarises.

use serde::{Deserialize, Serialize};

use super::ConversationStatus;
use crate::{
    customers::Customer,
    error::CoreResult,
    ids::{CustomerId, TenantId},
    time::from_ms,
    with_db, Services,
};

/// One conversation as the inbox lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxItem {
    /// The customer, whose conversation this is.
    pub customer_id: CustomerId,
    /// The customer's name, else e-mail, else external id, else "Visitor".
    pub display_name: String,
    /// Conversation status.
    pub status: ConversationStatus,
    /// Text of the last message (its URL or button text when it has no text).
    pub last_text: String,
    /// When the conversation last moved (last message, else creation).
    pub last_active: chrono::DateTime<chrono::Utc>,
    /// Customer messages since the last message sent to them.
    pub waiting: i64,
    /// Assigned user, if any.
    pub assigned_user: Option<String>,
    /// Assigned team, if any.
    pub assigned_team: Option<String>,
    /// The assigned user's name (else e-mail), or the assigned team's name.
    pub assignee_name: Option<String>,
}

/// Most conversations one inbox read returns.
pub const INBOX_MOST: i64 = 1000;

/// Conversations per status, for the inbox's tabs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxCounts {
    /// `UNREAD` conversations.
    pub unread: i64,
    /// `UNRESOLVED` conversations.
    pub unresolved: i64,
    /// `DONE` conversations.
    pub done: i64,
}

/// The inbox's most recently active conversations first; newest id breaks ties.
/// The assignee's name comes along, so that a list read (one per live event)
/// is one query rather than one plus every user and team of the tenant.
const INBOX_SQL: &str = "select c.id, c.first_name, c.last_name, c.email, c.external_id, c.status, \
       coalesce(c.last_message_at, c.created_at), c.assigned_user_id, c.assigned_team_id, \
       coalesce(nullif(u.display_name, ''), u.email, t.name), \
       (select coalesce(m.message, m.url, m.button_text) from messages m \
          where m.tenant_id = c.tenant_id and m.customer_id = c.id order by m.created_at desc, m.id desc limit 1), \
       (select count(*) from messages m where m.tenant_id = c.tenant_id and m.customer_id = c.id \
          and m.direction = 'INBOUND' and m.created_at > coalesce((select max(o.created_at) from messages o \
            where o.tenant_id = c.tenant_id and o.customer_id = c.id and o.direction = 'OUTBOUND'), -1)) \
     from customers c \
     left join users u on u.tenant_id = c.tenant_id and u.id = c.assigned_user_id \
     left join teams t on t.tenant_id = c.tenant_id and t.id = c.assigned_team_id \
     where c.tenant_id = $1 and c.status = $2 and ($3 is null or c.assigned_user_id = $3) \
     order by coalesce(c.last_message_at, c.created_at) desc, c.id desc limit $4";

type InboxRow = (
    CustomerId,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    i64,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
);

/// How a customer is called in the inbox and its thread: the name, else the
/// e-mail, else the external id, else "Visitor".
pub fn customer_name(c: &Customer) -> String {
    display_name(
        c.first_name.as_deref(),
        c.last_name.as_deref(),
        c.email.as_deref(),
        c.external_id.as_deref(),
    )
}

fn display_name(first: Option<&str>, last: Option<&str>, email: Option<&str>, external: Option<&str>) -> String {
    let name = [first, last]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if !name.is_empty() {
        return name;
    }
    [email, external]
        .into_iter()
        .flatten()
        .find(|s| !s.trim().is_empty())
        .map_or_else(|| "Visitor".to_string(), str::to_string)
}

impl Services {
    /// Up to `limit` (at most [`INBOX_MOST`]) conversations with `status`, most
    /// recently active first; with `assigned_to`, only that user's.
    pub async fn inbox(
        &self,
        tenant_id: &TenantId,
        status: ConversationStatus,
        assigned_to: Option<&str>,
        limit: i64,
    ) -> CoreResult<Vec<InboxItem>> {
        let rows: Vec<InboxRow> = with_db!(self.db(), |pool| sqlx::query_as(INBOX_SQL)
            .bind(tenant_id)
            .bind(status.as_str())
            .bind(assigned_to)
            .bind(limit.clamp(1, INBOX_MOST))
            .fetch_all(pool)
            .await)?;
        Ok(rows
            .into_iter()
            .map(
                |(id, first, last, email, external, status, active, user, team, assignee, text, waiting)| InboxItem {
                    display_name: display_name(
                        first.as_deref(),
                        last.as_deref(),
                        email.as_deref(),
                        external.as_deref(),
                    ),
                    customer_id: id,
                    status: ConversationStatus::parse(&status).unwrap_or(ConversationStatus::Unread),
                    last_text: text.unwrap_or_default(),
                    last_active: from_ms(active),
                    waiting,
                    assigned_user: user,
                    assigned_team: team,
                    assignee_name: assignee,
                },
            )
            .collect())
    }

    /// How many conversations have each status.
    pub async fn inbox_counts(&self, tenant_id: &TenantId) -> CoreResult<InboxCounts> {
        let rows: Vec<(String, i64)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select status, count(*) from customers where tenant_id = $1 group by status"
        )
        .bind(tenant_id)
        .fetch_all(pool)
        .await)?;
        let mut counts = InboxCounts::default();
        for (status, n) in rows {
            match ConversationStatus::parse(&status) {
                Some(ConversationStatus::Unread) => counts.unread = n,
                Some(ConversationStatus::Unresolved) => counts.unresolved = n,
                Some(ConversationStatus::Done) => counts.done = n,
                None => {}
            }
        }
        Ok(counts)
    }
}

#[cfg(test)]
mod tests {
    use super::display_name;

    #[test]
    fn names_fall_back_to_email_then_external_id() {
        assert_eq!(display_name(Some("Ada"), Some("Lovelace"), None, None), "Ada Lovelace");
        assert_eq!(
            display_name(Some(" "), None, Some("ada@example.com"), None),
            "ada@example.com"
        );
        assert_eq!(display_name(None, None, None, Some("crm-7")), "crm-7");
        assert_eq!(display_name(None, None, Some(""), None), "Visitor");
    }
}
