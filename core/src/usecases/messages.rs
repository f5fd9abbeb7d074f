//! A message to or from a customer, with everything it sets off.
//!
//! In: a visitor writes in the widget ([`Services::visitor_message`]) or sends
//! a form ([`Services::visitor_form`]), or an integration hands over what a
//! channel received ([`Services::receive_message`]). Each ends in
//! `record_inbound`, one transaction that reads top-down: the message is
//! stored and the conversation moves (`UNREAD`), the reports count it,
//! `message.received` is queued, routing runs (`engine::dispatch`), the live
//! update is announced, the `MESSAGE_RECEIVED` watchdogs fire, and after the
//! commit the inbox and the widget hear it.
//!
//! A file goes the same ways: stored first, then sent as a `FILE` message
//! ([`Services::visitor_file`], [`Services::agent_file`]); a message that is
//! refused takes its file with it.
//!
//! Out: an agent or an integration sends a message ([`Services::send_message`]):
//! stored, the conversation answered (the SLA clocks and `NO_ANSWER` timers
//! stop), and published live.

use crate::{
    audit::{self, Actor},
    config::{flows::Flow, rules::action::Greeting},
    conversations::{
        lock_conversation, read_form, replies_by_mail, validate_content, Channel, Content, Direction, FormIn, Message,
        MessageIn, MessageType, Trigger, WidgetMessageIn,
    },
    customers::{check_visitor_context, CustomerIn},
    engine::{dispatch, watchdogs},
    error::{CoreError, CoreResult},
    events::{self, EventType},
    files::FileUpload,
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    reports::facts,
    text_blocks,
    validate::Checks,
    Services,
};

impl Services {
    /// A message a visitor writes in the widget. Its `pageUrl` and `language`
    /// are kept on the customer first, so that routing the message sees them.
    pub async fn visitor_message(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
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
        let (page_url, language) =
            check_visitor_context(&mut checks, input.page_url.as_deref(), input.language.as_deref());
        let answered_rule = checks.optional_text("actionRuleId", input.action_rule_id.as_deref(), 200);
        checks.finish()?;
        // An attachment the inbox shows as the visitor's file must be one: a
        // link to anything else would let a visitor pass off any page as an
        // attachment ("📎 invoice.pdf").
        let attachment = matches!(
            content.kind,
            MessageType::Audio | MessageType::Video | MessageType::File
        );
        if let (true, Some(url)) = (attachment, content.url.as_deref()) {
            if !self.is_own_file(tenant_id, customer_id, url).await? {
                return Err(CoreError::invalid(
                    "url",
                    "not_uploaded",
                    "a visitor's attachment is a file they uploaded (POST /widget/file); send other links as text",
                ));
            }
        }
        if page_url.is_some() || language.is_some() {
            let customer = self.get_customer(tenant_id, customer_id).await?;
            self.set_visitor_context(tenant_id, &customer, page_url, language)
                .await?;
        }
        let greeting = match answered_rule {
            Some(rule_id) => self.action_rule_greeting(tenant_id, &rule_id).await?,
            None => None,
        };
        self.record_inbound(tenant_id, customer_id, content, Channel::Widget, greeting, actor)
            .await
    }
    /// A visitor's form: stored as its message, then audited and the
    /// `FORM_SUBMISSION` watchdogs fired (see the module doc).
    pub async fn visitor_form(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: FormIn,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let form = read_form(&input)?;
        // The message goes the way every customer message goes (routing, SLA,
        // live inbox); the form's own record follows in a second transaction.
        let message = self
            .record_inbound(tenant_id, customer_id, form.content, Channel::Widget, None, actor)
            .await?;
        let mut tx = self.db().begin().await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "form.submit",
            "customer",
            Some(customer_id),
        )
        .await?;
        watchdogs::form_submitted(&mut tx, tenant_id, customer_id, &form.summary).await?;
        if let Some(email) = &form.email {
            replies_by_mail::remember_reply_to(&mut tx, tenant_id, customer_id, email).await?;
        }
        tx.commit().await?;
        Ok(message)
    }
    /// Records a message a channel integration received from a customer. With
    /// `isExternalId`, an unknown external id creates the customer (which fires
    /// `customer.created` and `conversation.created`).
    pub async fn receive_message(&self, tenant_id: &TenantId, input: MessageIn, actor: &Actor) -> CoreResult<Message> {
        let (customer, content) = self.read_message_in(tenant_id, &input).await?;
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
        self.record_inbound(tenant_id, &customer_id, content, Channel::Api, None, actor)
            .await
    }
    /// Stores a customer's message: the conversation moves to `UNREAD` and
    /// `message.received` is queued. A `greeting` (the proactive message of an
    /// action rule that the message answers) is stored first, as the system's.
    pub(crate) async fn record_inbound(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        content: Content,
        channel: Channel,
        greeting: Option<Greeting>,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let mut tx = self.db().begin().await?;
        let from = lock_conversation(&mut tx, tenant_id, customer_id).await?;
        let greeted = match greeting {
            Some(greeting) => self.greet_in(&mut tx, tenant_id, customer_id, from, greeting).await?,
            None => Vec::new(),
        };
        if let Some(last) = greeted.last() {
            // The answer comes after the greeting wherever messages are ordered
            // by time (the widget, the inbox): never in the same millisecond.
            let at = last.created_at.timestamp_millis();
            while crate::time::now_ms() <= at {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        }
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
        let greeted: Vec<LiveEvent> = greeted
            .into_iter()
            .map(|m| LiveEvent::Message { message_id: m.id })
            .collect();
        for event in &greeted {
            self.announce_live(&mut tx, tenant_id, customer_id, event).await?;
        }
        let event = LiveEvent::Message {
            message_id: message.id.clone(),
        };
        self.announce_live(&mut tx, tenant_id, customer_id, &event).await?;
        effects.announce(self, &mut tx, tenant_id).await?;
        watchdogs::message_received(&mut tx, tenant_id, &message).await?;
        tx.commit().await?;
        for greeting in greeted {
            self.after_commit(tenant_id, customer_id, greeting);
        }
        self.after_commit(tenant_id, customer_id, event);
        effects.publish(self, tenant_id);
        Ok(message)
    }
    /// Stores an answered proactive message in `tx`: the rule's text, or its
    /// flow's messages, each as the system's (`channel` `AUTOMATION`), which
    /// answers nobody and starts no clock.
    async fn greet_in(
        &self,
        tx: &mut crate::db::Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        from: crate::conversations::ConversationStatus,
        greeting: Greeting,
    ) -> CoreResult<Vec<Message>> {
        let actor = Actor::system("action rule");
        match greeting {
            Greeting::Text(text) => {
                let content = validate_content(
                    &mut Checks::new(),
                    Some(MessageType::Message),
                    Some(&text),
                    None,
                    None,
                    None,
                );
                let message = self
                    .send_in(tx, tenant_id, customer_id, from, content, Channel::Automation, &actor)
                    .await?;
                Ok(vec![message])
            }
            Greeting::Flow(flow_id) => self.send_flow(tx, tenant_id, customer_id, &flow_id, &actor).await,
        }
    }
    /// Sends a message to a customer (spec 2.3): stored, queued as `message.sent`,
    /// pushed to the customer's open widget, and otherwise kept until the widget
    /// fetches it.
    pub async fn send_message(
        &self,
        tenant_id: &TenantId,
        input: MessageIn,
        channel: Channel,
        actor: &Actor,
    ) -> CoreResult<Message> {
        self.send_message_from(tenant_id, input, channel, None, actor).await
    }

    /// [`Services::send_message`] for a message an agent made from the text
    /// block `text_block` (when given): the use is counted with the message, in
    /// its transaction, so a message refused counts nothing.
    pub async fn send_message_from(
        &self,
        tenant_id: &TenantId,
        input: MessageIn,
        channel: Channel,
        text_block: Option<&str>,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let (customer, content) = self.read_message_in(tenant_id, &input).await?;
        let customer_id = customer.ok_or(CoreError::NotFound("customer"))?;
        let mut tx = self.db().begin().await?;
        let from = lock_conversation(&mut tx, tenant_id, &customer_id).await?;
        let message = self
            .send_in(&mut tx, tenant_id, &customer_id, from, content, channel, actor)
            .await?;
        if let Some(block) = text_block {
            let agent = (actor.kind == audit::ActorKind::User).then_some(actor.id.as_str());
            text_blocks::record_use(
                &mut tx,
                tenant_id,
                block,
                &message.id,
                agent,
                message.created_at.timestamp_millis(),
            )
            .await?;
        }
        if channel != Channel::Automation {
            // It answers the customer: the SLA clocks and NO_ANSWER timers stop,
            // and it goes by mail if no page carries it in time.
            dispatch::answered(&mut tx, tenant_id, &customer_id).await?;
            replies_by_mail::schedule_in(&mut tx, tenant_id, &customer_id).await?;
        }
        self.commit_live(
            tx,
            tenant_id,
            &customer_id,
            LiveEvent::Message {
                message_id: message.id.clone(),
            },
        )
        .await?;
        Ok(message)
    }
    /// An agent sends a flow by hand (from the inbox's picker): its messages
    /// go out in order, as the system's, and the conversation counts as
    /// answered, as with any reply of the agent's. A flow that is not the
    /// tenant's is 404.
    pub async fn send_flow_by_hand(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        flow_id: &str,
        actor: &Actor,
    ) -> CoreResult<Vec<Message>> {
        if !self.config_exists::<Flow>(tenant_id, flow_id).await? {
            return Err(CoreError::NotFound("flow"));
        }
        let mut tx = self.db().begin().await?;
        // The customer is the tenant's before anything is written for it.
        lock_conversation(&mut tx, tenant_id, customer_id).await?;
        let sent = self.send_flow(&mut tx, tenant_id, customer_id, flow_id, actor).await?;
        dispatch::answered(&mut tx, tenant_id, customer_id).await?;
        replies_by_mail::schedule_in(&mut tx, tenant_id, customer_id).await?;
        let Some(last) = sent.last() else {
            tx.commit().await?;
            return Ok(sent);
        };
        let event = LiveEvent::Message {
            message_id: last.id.clone(),
        };
        self.commit_live(tx, tenant_id, customer_id, event).await?;
        Ok(sent)
    }

    /// A visitor sends a file from the widget: stored, then posted as the
    /// visitor's `FILE` message (the name as its text), which routes and
    /// notifies like any message of the visitor. Files larger than
    /// [`Services::max_file_bytes`] are refused (and with 0, every file).
    pub async fn visitor_file(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        upload: FileUpload<'_>,
        actor: &Actor,
    ) -> CoreResult<Message> {
        let (token, name) = self.store_file(tenant_id, customer_id, upload).await?;
        let input = WidgetMessageIn {
            kind: Some(MessageType::File),
            message: Some(name),
            url: Some(self.file_link(&token, upload.name)),
            ..WidgetMessageIn::default()
        };
        let sent = self.visitor_message(tenant_id, customer_id, input, actor).await;
        self.keep_file_if(sent, &token).await
    }
    /// An agent sends a file to the customer from the inbox: stored, then sent
    /// as the agent's `FILE` message (`message.sent`, pushed to the widget).
    pub async fn agent_file(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        upload: FileUpload<'_>,
        actor: &Actor,
    ) -> CoreResult<Message> {
        // A customer of another tenant is as unknown as a missing one, before
        // anything is stored.
        self.get_customer(tenant_id, customer_id).await?;
        let (token, name) = self.store_file(tenant_id, customer_id, upload).await?;
        let input = MessageIn {
            customer_id: Some(customer_id.to_string()),
            is_external_id: Some(false),
            kind: Some(MessageType::File),
            message: Some(name),
            url: Some(self.file_link(&token, upload.name)),
            ..MessageIn::default()
        };
        let sent = self.send_message(tenant_id, input, Channel::Dashboard, actor).await;
        self.keep_file_if(sent, &token).await
    }
}
