//! How far each side of a conversation has read: the visitor (its widget was
//! open and shown when the message arrived) and the agents (one of them had the
//! conversation open). A mark is the creation time of the newest message that
//! side has seen, so "seen" is one comparison per message, a mark only moves
//! forward, and a page loaded later still shows it. Each move is also a live
//! update ([`LiveEvent::Read`]) for the other side's screens.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    db::{TenantTable, Tx},
    error::{CoreError, CoreResult},
    ids::{CustomerId, MessageId, TenantId},
    live::LiveEvent,
    time::from_ms,
    validate::Checks,
    with_tx, Services,
};

/// Which side of a conversation reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The customer, in the widget.
    Visitor,
    /// The tenant's agents (or an integration acting for them).
    Agent,
}

/// How far each side of a conversation has read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"visitorReadAt": "2026-11-28T10:15:00Z", "agentReadAt": "2026-11-28T10:16:12Z"}))]
pub struct ReadState {
    /// The visitor has seen every message created up to this time; null
    /// until they have seen one.
    pub visitor_read_at: Option<DateTime<Utc>>,
    /// An agent has seen every message created up to this time; null until
    /// one has.
    pub agent_read_at: Option<DateTime<Utc>>,
}

impl ReadState {
    /// From the two stored marks, in ms.
    pub(crate) fn of(visitor: Option<i64>, agent: Option<i64>) -> ReadState {
        ReadState {
            visitor_read_at: visitor.map(from_ms),
            agent_read_at: agent.map(from_ms),
        }
    }
}

/// A read mark to set: the newest message the reader has seen.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"messageId": "0190c3d2-8c1e-7b7a-9f1e-3f2a1b0c9d8e"}))]
pub struct ReadIn {
    /// Required: a message of this conversation (either direction); it and
    /// every older one count as read.
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200)]
    pub message_id: Option<String>,
}

const CUSTOMERS: TenantTable = TenantTable::new("customers", "customer");

impl Services {
    /// How far each side of a customer's conversation has read.
    pub async fn read_state(&self, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<ReadState> {
        let (visitor, agent): (Option<i64>, Option<i64>) = CUSTOMERS
            .read(self.db(), tenant_id, customer_id, "visitor_read_at, agent_read_at")
            .await?;
        Ok(ReadState::of(visitor, agent))
    }

    /// Marks the customer's conversation read by `reader` up to a message of
    /// it. A mark never moves back: an older message changes nothing and is
    /// not announced. A message of another conversation is 422
    /// `unknown_reference` on `messageId`.
    pub async fn mark_read(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        reader: Reader,
        input: &ReadIn,
    ) -> CoreResult<ReadState> {
        let mut checks = Checks::new();
        let message_id = checks.required_text("messageId", input.message_id.as_deref(), 200);
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        let Some(up_to) = message_time(&mut tx, tenant_id, customer_id, &MessageId::from(message_id)).await? else {
            // The conversation first: a missing customer is 404, as elsewhere.
            CUSTOMERS
                .read_in::<(String,)>(&mut tx, tenant_id, customer_id, "id")
                .await?;
            return Err(CoreError::invalid(
                "messageId",
                "unknown_reference",
                "no such message in this conversation",
            ));
        };
        let sql = match reader {
            Reader::Visitor => {
                "update customers set visitor_read_at = $3 where tenant_id = $1 and id = $2 \
                 and (visitor_read_at is null or visitor_read_at < $3)"
            }
            Reader::Agent => {
                "update customers set agent_read_at = $3 where tenant_id = $1 and id = $2 \
                 and (agent_read_at is null or agent_read_at < $3)"
            }
        };
        let moved = with_tx!(&mut tx, |conn| sqlx::query(sql)
            .bind(tenant_id)
            .bind(customer_id)
            .bind(up_to)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        let (visitor, agent): (Option<i64>, Option<i64>) = CUSTOMERS
            .read_in(&mut tx, tenant_id, customer_id, "visitor_read_at, agent_read_at")
            .await?;
        if moved == 0 {
            tx.commit().await?;
        } else {
            let event = LiveEvent::Read {
                by_visitor: reader == Reader::Visitor,
                up_to_ms: up_to,
            };
            self.commit_live(tx, tenant_id, customer_id, event).await?;
        }
        Ok(ReadState::of(visitor, agent))
    }
}

/// The creation time of a message of the customer's conversation, in ms.
async fn message_time(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    message_id: &MessageId,
) -> CoreResult<Option<i64>> {
    let row: Option<(i64,)> = with_tx!(tx, |conn| sqlx::query_as(
        "select created_at from messages where tenant_id = $1 and customer_id = $2 and id = $3"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .bind(message_id)
    .fetch_optional(conn)
    .await)?;
    Ok(row.map(|(at,)| at))
}
