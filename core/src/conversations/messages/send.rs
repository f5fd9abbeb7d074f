//! Storing messages, either direction, inside a caller's transaction. What a
//! message sets off (routing, SLA clocks, watchdogs) is the use cases'
//! (`usecases::messages`).

use super::*;
use crate::ids::{CustomerId, TenantId};

impl Services {
    /// Checks spec 2.3's message input, all fields at once: the customer it
    /// names (`None` when there is no such customer) and the content.
    pub(crate) async fn read_message_in(
        &self,
        tenant_id: &TenantId,
        input: &MessageIn,
    ) -> CoreResult<(Option<CustomerId>, Content)> {
        let mut checks = Checks::new();
        let customer = self.resolve_message_customer(tenant_id, input, &mut checks).await;
        let content = validate_content(
            &mut checks,
            input.kind,
            input.message.as_deref(),
            input.url.as_deref(),
            input.button_text.as_deref(),
            input.button_link.as_deref(),
        );
        checks.finish()?;
        Ok((customer, content))
    }

    /// Resolves spec 2.3's `customerId` / `isExternalId` pair to a customer id.
    async fn resolve_message_customer(
        &self,
        tenant_id: &TenantId,
        input: &MessageIn,
        checks: &mut Checks,
    ) -> Option<CustomerId> {
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
            Some(CustomerId::from(id))
        }
    }

    /// Stores a message to a customer in `tx`, whose conversation the caller locked
    /// (it had status `from`): queued as `message.sent` and audited; the caller
    /// publishes it live after the commit.
    ///
    /// A person's or an integration's message answers the customer: the status moves
    /// (`UNREAD` → `UNRESOLVED`) and the response times are measured; the caller
    /// stops the SLA clocks and `NO_ANSWER` timers (`engine::dispatch::answered`,
    /// see `usecases::messages`). A message of the system (a routing rule's system
    /// message or flow, `Channel::Automation`) is only stored and counted: it answers
    /// nobody.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn send_in(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        from: crate::conversations::ConversationStatus,
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

    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn insert_message(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
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
}
