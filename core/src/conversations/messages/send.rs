//! Storing messages: an agent's or an integration's to a customer, and a
//! customer's own, with the transaction each one sets off.

use super::*;

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
}
