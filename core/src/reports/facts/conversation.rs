//! The facts of a conversation's life: started, its status changed, each
//! message, and the clock they are timed by (who answers, since when the
//! customer waits).

use super::{record, Fact};
use crate::{
    db::{TenantTable, Tx},
    error::CoreResult,
    ids::{CustomerId, TenantId},
    reports::catalogue,
    time::now_ms,
    with_tx,
};

/// Where a conversation stands, for response-time facts.
struct ConversationClock {
    assignee: Option<String>,
    started_at: Option<i64>,
    first_reply_at: Option<i64>,
    awaiting_since: Option<i64>,
}

async fn clock(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<ConversationClock> {
    type Row = (Option<String>, Option<i64>, Option<i64>, Option<i64>);
    let (assignee, started_at, first_reply_at, awaiting_since): Row = TenantTable::new("customers", "customer")
        .read_in(
            tx,
            tenant_id,
            customer_id,
            "assigned_user_id, conversation_started_at, first_reply_at, awaiting_reply_since",
        )
        .await?;
    Ok(ConversationClock {
        assignee,
        started_at,
        first_reply_at,
        awaiting_since,
    })
}

/// The agent a conversation fact belongs to: the acting user, else the assignee.
fn agent_of<'a>(acting_user: Option<&'a str>, clock: &'a ConversationClock) -> Option<&'a str> {
    acting_user.or(clock.assignee.as_deref())
}

/// A conversation started (customer created, or reopened from `DONE`): counts it
/// and restarts its response clock.
pub(crate) async fn conversation_started(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    acting_user: Option<&str>,
) -> CoreResult<()> {
    let now = now_ms();
    let clock = clock(tx, tenant_id, customer_id).await?;
    let fact = Fact {
        kind: catalogue::CONVERSATION_NEW,
        at: now,
        value: 1,
        agent: clock.assignee.as_deref().or(acting_user),
        subject: Some(customer_id),
        ..Fact::default()
    };
    record(tx, tenant_id, &fact).await?;
    with_tx!(tx, |conn| sqlx::query(
        "update customers set conversation_started_at = $3, first_reply_at = null, awaiting_reply_since = null, \
         routing_id = null where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .bind(now)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A conversation's status changed to `to`.
pub(crate) async fn status_changed(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    to: &str,
    acting_user: Option<&str>,
) -> CoreResult<()> {
    let clock = clock(tx, tenant_id, customer_id).await?;
    let mut fact = Fact {
        kind: catalogue::STATUS_CHANGE,
        at: now_ms(),
        value: 1,
        agent: agent_of(acting_user, &clock),
        dim: Some(to),
        subject: Some(customer_id),
        ..Fact::default()
    };
    record(tx, tenant_id, &fact).await?;
    if to == "DONE" {
        fact.kind = catalogue::CONVERSATION_DONE;
        fact.dim = None;
        record(tx, tenant_id, &fact).await?;
    }
    Ok(())
}

/// A message was stored: counts it, and for an agent's reply measures the first
/// response and the response to the oldest waiting customer message.
pub(crate) async fn message_stored(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    inbound: bool,
    message_type: &str,
    acting_user: Option<&str>,
) -> CoreResult<()> {
    let now = now_ms();
    let clock = clock(tx, tenant_id, customer_id).await?;
    let agent = if inbound {
        clock.assignee.as_deref()
    } else {
        agent_of(acting_user, &clock)
    };
    let fact = Fact {
        kind: if inbound {
            catalogue::MESSAGE_IN
        } else {
            catalogue::MESSAGE_OUT
        },
        at: now,
        value: 1,
        agent,
        dim: Some(message_type),
        subject: Some(customer_id),
        ..Fact::default()
    };
    record(tx, tenant_id, &fact).await?;
    if inbound {
        if clock.awaiting_since.is_none() {
            set_clock(tx, tenant_id, customer_id, "awaiting_reply_since = $3", Some(now)).await?;
        }
        return Ok(());
    }
    if let (Some(started), None) = (clock.started_at, clock.first_reply_at) {
        let first = Fact {
            kind: catalogue::FIRST_RESPONSE,
            value: now - started,
            ..fact.clone()
        };
        record(tx, tenant_id, &first).await?;
        set_clock(tx, tenant_id, customer_id, "first_reply_at = $3", Some(now)).await?;
    }
    if let Some(since) = clock.awaiting_since {
        let reply = Fact {
            kind: catalogue::RESPONSE,
            value: now - since,
            ..fact.clone()
        };
        record(tx, tenant_id, &reply).await?;
        set_clock(tx, tenant_id, customer_id, "awaiting_reply_since = $3", None).await?;
    }
    Ok(())
}

/// Since when a conversation's oldest unanswered customer message waits.
pub(crate) async fn awaiting_since(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
) -> CoreResult<Option<i64>> {
    Ok(clock(tx, tenant_id, customer_id).await?.awaiting_since)
}

/// A message of the system (a routing rule's system message or flow) was sent:
/// counted as an outbound message, but it answers nobody, so no response is measured.
pub(crate) async fn message_counted(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    message_type: &str,
) -> CoreResult<()> {
    let fact = Fact {
        kind: catalogue::MESSAGE_OUT,
        at: now_ms(),
        value: 1,
        dim: Some(message_type),
        subject: Some(customer_id),
        ..Fact::default()
    };
    record(tx, tenant_id, &fact).await?;
    Ok(())
}

async fn set_clock(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    set: &str,
    value: Option<i64>,
) -> CoreResult<()> {
    let sql = format!("update customers set {set} where tenant_id = $1 and id = $2");
    with_tx!(tx, |conn| sqlx::query(&sql)
        .bind(tenant_id)
        .bind(customer_id)
        .bind(value)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    Ok(())
}
