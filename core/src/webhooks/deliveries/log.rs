//! The delivery log (deliveries and attempts), replay, and the event catalogue.

use super::*;
use crate::{db::keyed_page, ids::TenantId};

impl Services {
    /// A page of an endpoint's deliveries, newest first.
    pub async fn list_deliveries(
        &self,
        tenant_id: &TenantId,
        endpoint_id: &WebhookId,
        page: &PageRequest,
    ) -> CoreResult<Page<Delivery>> {
        let paging = Paging::from_request(page)?;
        self.get_webhook(tenant_id, endpoint_id).await?;
        let sql = "select d.id, d.event_id, e.type as event_type, d.state, d.attempts, d.next_attempt_at, \
             d.last_status, d.last_error, d.created_at, d.completed_at from webhook_deliveries d \
             join events e on e.id = d.event_id where d.tenant_id = $1 and d.endpoint_id = $2 \
             order by d.seq desc limit $3 offset $4";
        let (total, rows): (i64, Vec<DeliveryRow>) = keyed_page(
            self.db(),
            "select count(*) from webhook_deliveries where tenant_id = $1 and endpoint_id = $2",
            sql,
            tenant_id,
            endpoint_id,
            &paging,
        )
        .await?;
        Ok(paging.page(
            total,
            rows.into_iter()
                .map(|r| Delivery {
                    id: r.id,
                    event_id: r.event_id,
                    event_type: r.event_type,
                    next_attempt_at: (r.state == "pending").then(|| from_ms(r.next_attempt_at)),
                    state: r.state,
                    attempts: r.attempts,
                    last_status: r.last_status,
                    last_error: r.last_error,
                    created_at: from_ms(r.created_at),
                    completed_at: r.completed_at.map(from_ms),
                })
                .collect(),
        ))
    }

    /// A page of an endpoint's attempts, newest first: the delivery log.
    pub async fn list_attempts(
        &self,
        tenant_id: &TenantId,
        endpoint_id: &WebhookId,
        page: &PageRequest,
    ) -> CoreResult<Page<Attempt>> {
        let paging = Paging::from_request(page)?;
        self.get_webhook(tenant_id, endpoint_id).await?;
        let sql = "select a.id, a.delivery_id, d.event_id, e.type as event_type, a.attempt, a.started_at, \
             a.duration_ms, a.status_code, a.error, a.response_excerpt from webhook_attempts a \
             join webhook_deliveries d on d.id = a.delivery_id join events e on e.id = d.event_id \
             where a.tenant_id = $1 and a.endpoint_id = $2 order by a.started_at desc, a.id desc limit $3 offset $4";
        let (total, rows): (i64, Vec<AttemptRow>) = keyed_page(
            self.db(),
            "select count(*) from webhook_attempts where tenant_id = $1 and endpoint_id = $2",
            sql,
            tenant_id,
            endpoint_id,
            &paging,
        )
        .await?;
        Ok(paging.page(
            total,
            rows.into_iter()
                .map(|r| Attempt {
                    id: r.id,
                    delivery_id: r.delivery_id,
                    event_id: r.event_id,
                    event_type: r.event_type,
                    attempt: r.attempt,
                    at: from_ms(r.started_at),
                    duration_ms: r.duration_ms,
                    status_code: r.status_code,
                    error: r.error,
                    response_excerpt: r.response_excerpt,
                })
                .collect(),
        ))
    }

    /// Sends a delivery again, with its original `webhook-id`, on a fresh schedule.
    /// A delivery in flight cannot be replayed (409).
    pub async fn replay_delivery(
        &self,
        tenant_id: &TenantId,
        endpoint_id: &WebhookId,
        delivery_id: &str,
        actor: &Actor,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let state: Option<String> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
            "select state from webhook_deliveries where tenant_id = $1 and endpoint_id = $2 and id = $3"
        )
        .bind(tenant_id)
        .bind(endpoint_id)
        .bind(delivery_id)
        .fetch_optional(conn)
        .await)?;
        match state.as_deref() {
            None => return Err(CoreError::NotFound("delivery")),
            Some("delivering") => {
                return Err(CoreError::Conflict {
                    field: None,
                    code: "delivery_in_flight",
                    message: "the delivery is being attempted right now; replay it once the attempt ends".into(),
                })
            }
            _ => {}
        }
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_deliveries set state = 'pending', attempts = 0, next_attempt_at = $2, completed_at = null \
             where id = $1"
        )
        .bind(delivery_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        // An admin who replays expects an attempt now, not at the end of the
        // endpoint's hold; if its circuit is open, the replay is the probe.
        with_tx!(&mut tx, |conn| sqlx::query(
            "update webhook_endpoints set next_attempt_at = $2 where id = $1 and next_attempt_at > $2"
        )
        .bind(endpoint_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "webhook.replay",
            "webhook",
            Some(endpoint_id),
        )
        .await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(())
    }

    /// Deliveries not yet finished, over every tenant (for tools, benchmarks
    /// and tests: whether the queue has drained), counting an event that waits
    /// for its fan-out as one, and an event that an enabled endpoint behind in
    /// the stream has yet to catch up on as one per such endpoint (whether it
    /// takes that type or not: its catch-up passes it either way). The latter
    /// is a count over the stream per endpoint behind, too dear for a scrape.
    pub async fn unfinished_deliveries(&self) -> CoreResult<i64> {
        let backend = self.db().backend();
        let sql = format!(
            "select (select count(*) from webhook_deliveries where state in ('pending', 'delivering')) \
             + ({}) \
             + (select count(*) from webhook_endpoints w join events on events.tenant_id = w.tenant_id \
                where w.fanout_mark is not null and w.enabled and not w.receiver \
                and not events.directed and not events.fanout_pending and {})",
            super::fanout::count_pending(backend),
            super::catch_up::owed(super::fanout::position(backend)),
        );
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(&sql)
            .fetch_one(pool)
            .await)?)
    }
}

/// Every event type with its meaning, for `GET /rest/v1/webhook/eventtypes`.
pub fn event_catalogue() -> Vec<(EventType, &'static str)> {
    EventType::ALL
        .into_iter()
        .map(|t| {
            let what = match t {
                EventType::ConversationCreated => {
                    "a customer was created, or its conversation went from DONE to UNREAD; body: Conversation"
                }
                EventType::ConversationStatusChanged => "a conversation's status changed; body: Conversation",
                EventType::MessageReceived => "a customer sent a message; body: Message",
                EventType::MessageSent => "a message was sent to a customer; body: Message",
                EventType::CustomerCreated => "a customer was created; body: Customer",
                EventType::CustomerUpdated => "a customer's fields changed; body: Customer",
                EventType::CustomerDeleted => "a customer was deleted and erased; body: CustomerErased, the ids alone",
                EventType::CustomerAssigned => "a customer was assigned or unassigned; body: Customer",
                EventType::CsatSubmitted => "a visitor rated a closed conversation; body: CsatSubmitted",
                EventType::NoteCreated => "a private note was written in a conversation; body: Note",
                EventType::WebhookTest => "sent on request to one endpoint (not subscribable)",
                EventType::WatchdogAlert => {
                    "a watchdog fired; sent to its WEBHOOK receivers only (not subscribable); body: the alert"
                }
                EventType::SlaMissed => {
                    "an SLA clock was missed; sent to WEBHOOK receivers only (not subscribable); body: the alert"
                }
            };
            (t, what)
        })
        .collect()
}
