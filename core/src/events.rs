//! Domain events and the transactional outbox.
//!
//! A service that changes something integrators hear about calls [`enqueue`] inside
//! the same transaction as the change. `enqueue` stores the event once (its payload as
//! the exact bytes that will be sent), marked for fan-out, when at least one enabled
//! endpoint of the tenant subscribes to it. Commit makes it visible; roll back and it
//! never existed. The delivery worker then writes one delivery per subscribed
//! endpoint, after the commit (`webhooks::deliveries::fanout`), so a write costs one
//! row however many endpoints listen.

use serde::{Deserialize, Serialize};

use crate::{
    actor::Actor,
    db::Tx,
    error::{CoreError, CoreResult},
    ids::TenantId,
    time::now_ms,
    with_tx,
};

/// Every event type Rapport delivers. The wire names are Standard Webhooks style
/// (`<resource>.<verb>`), sent in the `rapport-event-type` header.
// Its schema is `DeliveredEventType`: the schema `EventType` is
// `SubscribableEventType`, which leaves out `webhook.test` because a subscription
// cannot name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[schema(as = DeliveredEventType)]
pub enum EventType {
    /// Spec 6 "new conversation": a customer was created, or went from `DONE` to
    /// `UNREAD`. Body: the Conversation object (spec 2.2).
    #[serde(rename = "conversation.created")]
    ConversationCreated,
    /// Spec 6 "conversation status change": any change of a customer's status. Body: the
    /// Conversation object.
    #[serde(rename = "conversation.status_changed")]
    ConversationStatusChanged,
    /// Spec 6 "new customer message". Body: the Message object.
    #[serde(rename = "message.received")]
    MessageReceived,
    /// A message was sent to a customer. Body: the Message object.
    #[serde(rename = "message.sent")]
    MessageSent,
    /// A customer was created. Body: the Customer object (spec 2.1).
    #[serde(rename = "customer.created")]
    CustomerCreated,
    /// A customer's fields were changed. Body: the Customer object.
    #[serde(rename = "customer.updated")]
    CustomerUpdated,
    /// A customer was deleted, and everything held about them erased. Body:
    /// the ids alone (`CustomerErased`: `id`, `externalId`), so that
    /// integrators can erase them too.
    #[serde(rename = "customer.deleted")]
    CustomerDeleted,
    /// A customer was assigned to a user or a team, or unassigned. Body: the Customer
    /// object.
    #[serde(rename = "customer.assigned")]
    CustomerAssigned,
    /// A visitor rated a closed conversation (CSAT). Body: the rating with its
    /// `customerId` (`CsatSubmitted`).
    #[serde(rename = "csat.submitted")]
    CsatSubmitted,
    /// An agent or an integration wrote a private note in a conversation. Body:
    /// the Note. Notes never go out as `message.*` events.
    #[serde(rename = "note.created")]
    NoteCreated,
    /// Sent on request to one endpoint ("send test event"). Body: `{"message": …}`.
    #[serde(rename = "webhook.test")]
    WebhookTest,
    /// A watchdog fired; sent only to the watchdog's `WEBHOOK` receivers, signed
    /// with the tenant's alert secret. Body: the alert (`engine::alerts::AlertPayload`).
    #[serde(rename = "watchdog.alert")]
    WatchdogAlert,
    /// An SLA clock was missed; sent only to `WEBHOOK` receivers, signed with the
    /// tenant's alert secret. Body: the alert.
    #[serde(rename = "sla.missed")]
    SlaMissed,
}

/// The schema of the event types a subscription's `eventTypes` takes (named
/// `EventType` in the document): every [`EventType`] except `webhook.test`, which
/// is only sent on request to one endpoint.
pub struct SubscribableEventType;

impl utoipa::PartialSchema for SubscribableEventType {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let names: Vec<&str> = EventType::ALL
            .into_iter()
            .filter(|t| t.is_subscribable())
            .map(EventType::as_str)
            .collect();
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(names))
            .description(Some(
                "An event type a webhook endpoint can subscribe to (`<resource>.<verb>`, sent in the \
                 `rapport-event-type` header). `webhook.test` is not one: it is sent only on request; nor \
                 are `watchdog.alert` and `sla.missed`, sent only to the receivers of a watchdog or SLA rule.",
            ))
            .into()
    }
}

impl utoipa::ToSchema for SubscribableEventType {
    fn name() -> std::borrow::Cow<'static, str> {
        "EventType".into()
    }
}

impl EventType {
    /// Whether a subscription may name this type: all but `webhook.test` (sent on
    /// request) and the alerts (sent to the receivers their watchdog or SLA rule
    /// names).
    pub fn is_subscribable(self) -> bool {
        !matches!(
            self,
            EventType::WebhookTest | EventType::WatchdogAlert | EventType::SlaMissed
        )
    }

    /// Every event type, in documentation order.
    pub const ALL: [EventType; 13] = [
        EventType::ConversationCreated,
        EventType::ConversationStatusChanged,
        EventType::MessageReceived,
        EventType::MessageSent,
        EventType::CustomerCreated,
        EventType::CustomerUpdated,
        EventType::CustomerDeleted,
        EventType::CustomerAssigned,
        EventType::CsatSubmitted,
        EventType::NoteCreated,
        EventType::WebhookTest,
        EventType::WatchdogAlert,
        EventType::SlaMissed,
    ];

    /// The wire name, e.g. `conversation.created`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::ConversationCreated => "conversation.created",
            EventType::ConversationStatusChanged => "conversation.status_changed",
            EventType::MessageReceived => "message.received",
            EventType::MessageSent => "message.sent",
            EventType::CustomerCreated => "customer.created",
            EventType::CustomerUpdated => "customer.updated",
            EventType::CustomerDeleted => "customer.deleted",
            EventType::CustomerAssigned => "customer.assigned",
            EventType::CsatSubmitted => "csat.submitted",
            EventType::NoteCreated => "note.created",
            EventType::WebhookTest => "webhook.test",
            EventType::WatchdogAlert => "watchdog.alert",
            EventType::SlaMissed => "sla.missed",
        }
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// A new event id: `msg_` and a time-ordered UUID. It is the `webhook-id` of every
/// delivery of the event, unchanged across retries and replays, so receivers can use
/// it to drop duplicates.
pub fn new_event_id() -> String {
    format!("msg_{}", uuid::Uuid::now_v7().simple())
}

/// Stores `payload` as event `event_type`, to be delivered to every enabled
/// endpoint of the tenant that subscribes to it. `customer_id` orders deliveries: one
/// endpoint receives one customer's events in the order they were enqueued.
/// Returns the number of endpoints that subscribe to it now (the fan-out, after
/// the commit, reads them again).
pub async fn enqueue(
    tx: &mut Tx,
    tenant_id: &TenantId,
    actor: &Actor,
    event_type: EventType,
    customer_id: Option<&str>,
    payload: &impl Serialize,
) -> CoreResult<usize> {
    let filters: Vec<String> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select event_types from webhook_endpoints where tenant_id = $1 and enabled and not receiver"
    )
    .bind(tenant_id)
    .fetch_all(conn)
    .await)?;
    let subscribed = filters.iter().filter(|filter| subscribes(filter, event_type)).count();
    if subscribed == 0 {
        // Nobody listens: nothing to store. Replays only concern delivered events.
        return Ok(0);
    }
    let body = serde_json::to_string(payload).map_err(|e| CoreError::Internal(format!("event payload: {e}")))?;
    let event = NewEvent {
        tenant_id,
        actor,
        event_type,
        customer_id,
        body: &body,
    };
    insert_event(tx, &event, Audience::Subscribers).await?;
    Ok(subscribed)
}

/// An event to store.
struct NewEvent<'a> {
    tenant_id: &'a TenantId,
    actor: &'a Actor,
    event_type: EventType,
    customer_id: Option<&'a str>,
    body: &'a str,
}

/// How an event reaches its endpoints.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Audience {
    /// Every endpoint that subscribes to it: the worker's fan-out, after the
    /// commit (and an endpoint behind in the stream catches up on it).
    Subscribers,
    /// Only the endpoints it is queued to at once ([`deliver_to`]).
    Named,
}

/// Inserts an event row and returns its id and time.
async fn insert_event(tx: &mut Tx, event: &NewEvent<'_>, audience: Audience) -> CoreResult<(String, i64)> {
    let event_id = new_event_id();
    let now = now_ms();
    let fanout_pending = audience == Audience::Subscribers;
    with_tx!(tx, |conn| sqlx::query(
        "insert into events (id, tenant_id, type, customer_id, actor, payload, created_at, fanout_pending, directed) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    )
    .bind(&event_id)
    .bind(event.tenant_id)
    .bind(event.event_type.as_str())
    .bind(event.customer_id)
    .bind(event.actor.label())
    .bind(event.body)
    .bind(now)
    .bind(fanout_pending)
    .bind(!fanout_pending)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok((event_id, now))
}

/// Deliveries written by one statement (six parameters each, well under SQLite's
/// limit of 32,766).
const DELIVERIES_PER_INSERT: usize = 500;

/// Stores an event and queues it to exactly `endpoint_ids` at once, in the
/// caller's transaction: "send test event" and the alerts, which go to the one
/// endpoint or the few receivers they name.
pub(crate) async fn deliver_to(
    tx: &mut Tx,
    tenant_id: &TenantId,
    actor: &Actor,
    event_type: EventType,
    customer_id: Option<&str>,
    body: &str,
    endpoint_ids: &[String],
) -> CoreResult<String> {
    let event = NewEvent {
        tenant_id,
        actor,
        event_type,
        customer_id,
        body,
    };
    let (event_id, now) = insert_event(tx, &event, Audience::Named).await?;
    let deliveries: Vec<QueuedDelivery<'_>> = endpoint_ids
        .iter()
        .map(|endpoint_id| QueuedDelivery {
            tenant_id,
            endpoint_id,
            event_id: &event_id,
            ordering_key: customer_id.unwrap_or(&event_id),
            created_at: now,
        })
        .collect();
    insert_deliveries(tx, &deliveries).await?;
    Ok(event_id)
}

/// A delivery to write: one event to one endpoint.
pub(crate) struct QueuedDelivery<'a> {
    pub tenant_id: &'a TenantId,
    pub endpoint_id: &'a str,
    pub event_id: &'a str,
    /// The customer, or the event itself when it has none.
    pub ordering_key: &'a str,
    /// The event's time: the queue is read in `(created_at, seq)` order.
    pub created_at: i64,
}

/// Writes pending deliveries, due at once, in the order given: `seq` follows
/// it, which is what orders one customer's events at an endpoint.
pub(crate) async fn insert_deliveries(tx: &mut Tx, deliveries: &[QueuedDelivery<'_>]) -> CoreResult<()> {
    // One statement for many deliveries: each statement is a round trip to the
    // database (a thread hop on SQLite). Chunks keep the bound parameters under
    // SQLite's limit.
    const PER_ROW: usize = 6;
    for chunk in deliveries.chunks(DELIVERIES_PER_INSERT) {
        let rows = (0..chunk.len())
            .map(|i| {
                // id, tenant, endpoint, event, ordering key, and the event's
                // time (created and due).
                let p = 1 + PER_ROW * i;
                let (tenant, endpoint, event, key, at) = (p + 1, p + 2, p + 3, p + 4, p + 5);
                format!("(${p}, ${tenant}, ${endpoint}, ${event}, ${key}, 'pending', 0, ${at}, ${at})")
            })
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "insert into webhook_deliveries (id, tenant_id, endpoint_id, event_id, ordering_key, state, attempts, \
             next_attempt_at, created_at) values {rows}"
        );
        with_tx!(tx, |conn| {
            let mut q = sqlx::query(&sql);
            for d in chunk {
                q = q
                    .bind(format!("dlv_{}", uuid::Uuid::now_v7().simple()))
                    .bind(d.tenant_id)
                    .bind(d.endpoint_id)
                    .bind(d.event_id)
                    .bind(d.ordering_key)
                    .bind(d.created_at);
            }
            q.execute(conn).await.map(|r| r.rows_affected())
        })?;
    }
    Ok(())
}

/// Whether an endpoint's stored filter (a JSON array of wire names; empty means
/// every event) takes `event_type`.
pub(crate) fn subscribes(filter: &str, event_type: EventType) -> bool {
    takes(filter, event_type.as_str())
}

/// Whether an endpoint's stored filter takes events of the wire name
/// `type_name`, one this build knows or not (a newer instance may have
/// written it during a rolling upgrade).
pub(crate) fn takes(filter: &str, type_name: &str) -> bool {
    let types: Vec<String> = serde_json::from_str(filter).unwrap_or_default();
    types.is_empty() || types.iter().any(|t| t == type_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_round_trip() {
        for t in EventType::ALL {
            assert_eq!(EventType::parse(t.as_str()), Some(t));
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
        assert_eq!(EventType::parse("conversation.deleted"), None);
    }

    #[test]
    fn empty_filter_takes_everything() {
        assert!(subscribes("[]", EventType::MessageSent));
        assert!(subscribes(r#"["message.sent"]"#, EventType::MessageSent));
        assert!(!subscribes(r#"["message.received"]"#, EventType::MessageSent));
    }

    #[test]
    fn event_ids_have_no_dots() {
        // Standard Webhooks signs `id.timestamp.body`; a dot in the id would be ambiguous.
        assert!(!new_event_id().contains('.'));
    }
}
