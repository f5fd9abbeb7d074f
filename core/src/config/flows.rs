//! Flows: a named, ordered list of messages that a routing rule's `SEND_FLOW`
//! action sends to the customer, one after the other (a greeting, a card with a
//! link to the help centre, a file). The spec names the action but not the
//! object; this is the smallest form that does the job, and our extension.
//!
//! Each message has the content of spec 2.3's message (`type`, `message`, `url`,
//! `buttonText`, `buttonLink`) and is checked by the same rules as a message an
//! agent sends. A flow holds 1 to [`MAX_FLOW_MESSAGES`] messages. A flow that a
//! routing rule sends cannot be deleted (409 `in_use`; see [`super::references`]).
//!
//! Sent by the routing engine ([`Services::send_flow`]), each message is stored
//! as an outbound message of the system (`senderType` `system`, `channel`
//! `AUTOMATION`), which answers nobody: the conversation stays `UNREAD`, and no
//! response time or SLA clock counts it as an agent's answer.

use serde::{Deserialize, Serialize};

use super::{decode, ConfigKind, ConfigRow, Meta};
use crate::{
    audit::Actor,
    conversations::{self, Channel, Message, MessageType},
    db::Tx,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    validate::Checks,
    with_tx, Services,
};

/// Most messages in one flow.
pub const MAX_FLOW_MESSAGES: usize = 20;

/// One message of a flow: the content of a message to a customer (spec 2.3).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FlowMessage {
    /// Required: `MESSAGE`, `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    #[serde(rename = "type")]
    #[schema(required = true, nullable = false)]
    pub kind: Option<MessageType>,
    /// The text; required for `MESSAGE` (at most 10,000 characters), a caption otherwise.
    #[schema(max_length = 10000)]
    pub message: Option<String>,
    /// An http(s) URL; required for `AUDIO`, `VIDEO` and `FILE`.
    #[schema(format = "uri", max_length = 2048)]
    pub url: Option<String>,
    /// Required for `CARD`: the button's text (at most 200 characters).
    #[schema(max_length = 200)]
    pub button_text: Option<String>,
    /// Required for `CARD`: the button's http(s) link.
    #[schema(format = "uri", max_length = 2048)]
    pub button_link: Option<String>,
}

impl FlowMessage {
    /// The fields each `type` needs, as JSON Schema conditions (what
    /// [`Services::save_flow`] checks, as for a message an agent sends).
    pub fn schema_conditions() -> serde_json::Value {
        conversations::content_conditions(false)
    }
}

/// A flow.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "Welcome", "messages": [
    {"type": "MESSAGE", "message": "Hi! An agent will be with you shortly."},
    {"type": "CARD", "message": "Meanwhile, our help centre may already have the answer.", "buttonText": "Open the help centre", "buttonLink": "https://help.example.com"}
]}))]
pub struct Flow {
    /// Id and timestamps.
    #[serde(flatten)]
    pub meta: Meta,
    /// Name (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// The messages, sent in this order (1–20).
    #[serde(default)]
    #[schema(required = true, min_items = 1, max_items = 20)]
    pub messages: Vec<FlowMessage>,
}

impl ConfigKind for Flow {
    const KIND: &'static str = "flow";
    const LABEL: &'static str = "flow";
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_default()
    }
}

/// Checks one message's content with the rules of a message to a customer; the
/// errors are named `messages[i].field`.
fn check_message(checks: &mut Checks, i: usize, m: &FlowMessage) -> FlowMessage {
    let mut own = Checks::new();
    let content = conversations::validate_content(
        &mut own,
        m.kind,
        m.message.as_deref(),
        m.url.as_deref(),
        m.button_text.as_deref(),
        m.button_link.as_deref(),
    );
    if let Err(CoreError::Validation(errors)) = own.finish() {
        for e in errors {
            checks.push(&format!("messages[{i}].{}", e.field), &e.code, e.message);
        }
    }
    FlowMessage {
        kind: m.kind,
        message: content.message,
        url: content.url,
        button_text: content.button_text,
        button_link: content.button_link,
    }
}

impl Services {
    /// Creates or overrides a flow.
    pub async fn save_flow(&self, tenant_id: &TenantId, mut input: Flow, actor: &Actor) -> CoreResult<Flow> {
        let mut checks = Checks::new();
        input.name = Some(checks.required_text("name", input.name.as_deref(), 200));
        if input.messages.is_empty() {
            checks.push("messages", "required", "a flow needs at least one message");
        }
        if input.messages.len() > MAX_FLOW_MESSAGES {
            checks.push(
                "messages",
                "too_many",
                format!("messages may hold at most {MAX_FLOW_MESSAGES} items"),
            );
        }
        input.messages = input
            .messages
            .iter()
            .enumerate()
            .map(|(i, m)| check_message(&mut checks, i, m))
            .collect();
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }

    /// Sends a flow's messages to a customer, in order, inside the caller's
    /// transaction (the routing engine's): each is stored as an outbound message
    /// (`channel` `AUTOMATION`, sent by `actor`, for the engine
    /// `Actor::system("routing")`), queued as `message.sent` and audited. Being the
    /// system's, they answer nobody (see [`Services::send_in`]). The caller
    /// publishes the returned messages live after its commit. A flow that is gone
    /// (deleted since the rule was read) sends nothing.
    pub(crate) async fn send_flow(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        flow_id: &str,
        actor: &Actor,
    ) -> CoreResult<Vec<Message>> {
        let row: Option<ConfigRow> = with_tx!(tx, |conn| {
            sqlx::query_as(
            "select id, body, created_at, updated_at from config_objects where tenant_id = $1 and kind = $2 and id = $3"
        )
        .bind(tenant_id)
        .bind(Flow::KIND)
        .bind(flow_id)
        .fetch_optional(conn)
        .await
        })?;
        let Some(row) = row else {
            return Ok(Vec::new());
        };
        let flow: Flow = decode(row)?;
        let from = conversations::lock_conversation(tx, tenant_id, customer_id).await?;
        let mut sent = Vec::with_capacity(flow.messages.len());
        for m in &flow.messages {
            // Stored flows were checked when saved; this only builds the content.
            let content = conversations::validate_content(
                &mut Checks::new(),
                m.kind,
                m.message.as_deref(),
                m.url.as_deref(),
                m.button_text.as_deref(),
                m.button_link.as_deref(),
            );
            let message = self
                .send_in(tx, tenant_id, customer_id, from, content, Channel::Automation, actor)
                .await?;
            sent.push(message);
        }
        Ok(sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{
        audit::ActorKind,
        conversations::{ConversationStatus, Direction},
        customers::CustomerIn,
        engine::snapshot::conversation_facts,
        model::PageRequest,
        tenants::NewTenant,
        testing::TestDb,
    };

    /// `send_flow` stores the flow's messages in order, as the system's, in the
    /// caller's transaction: nothing shows before the commit, and nothing counts
    /// as an answer afterwards.
    async fn a_flow_is_sent_in_order_inside_the_callers_transaction(db: TestDb) {
        let s = db.services();
        let admin = Actor::system("tests");
        let tenant = s
            .create_tenant(
                NewTenant {
                    name: Some("Flows".into()),
                    ..Default::default()
                },
                &admin,
            )
            .await
            .unwrap()
            .id;
        let customer = s
            .save_customer(&tenant, CustomerIn::default(), &admin)
            .await
            .unwrap()
            .id;
        let flow: Flow = serde_json::from_value(serde_json::json!({
            "name": "Welcome",
            "messages": [
                {"type": "MESSAGE", "message": "Hello"},
                {"type": "CARD", "message": "Help", "buttonText": "Open", "buttonLink": "https://help.example.com"},
                {"type": "FILE", "url": "https://cdn.example.com/prices.pdf"}
            ]
        }))
        .unwrap();
        let flow_id = s.save_flow(&tenant, flow, &admin).await.unwrap().meta.id.unwrap();

        let routing = Actor::system("routing");
        let mut tx = s.db().begin().await.unwrap();
        let sent = s
            .send_flow(&mut tx, &tenant, &customer, &flow_id, &routing)
            .await
            .unwrap();
        let gone = s
            .send_flow(&mut tx, &tenant, &customer, "no-such-flow", &routing)
            .await
            .unwrap();
        assert!(gone.is_empty(), "an unknown flow sends nothing");
        let facts = conversation_facts(&mut tx, &tenant, &customer).await.unwrap();
        tx.commit().await.unwrap();

        let kinds: Vec<MessageType> = sent.iter().map(|m| m.kind).collect();
        assert_eq!(kinds, [MessageType::Message, MessageType::Card, MessageType::File]);
        assert_eq!(sent[1].button_link.as_deref(), Some("https://help.example.com"));
        for m in &sent {
            assert_eq!(m.direction, Direction::Outbound);
            assert_eq!(m.sender_type, ActorKind::System);
            assert_eq!(m.channel, Channel::Automation);
        }
        let stored = s
            .list_messages(&tenant, &customer, &PageRequest::default())
            .await
            .unwrap();
        let mut ids: Vec<&str> = stored.results.iter().map(|m| m.id.as_str()).collect();
        ids.reverse();
        let sent_ids: Vec<&str> = sent.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, sent_ids, "stored in the flow's order");
        // The system's messages answer nobody: still unread, no first reply.
        assert_eq!(facts.status, ConversationStatus::Unread);
        assert_eq!(facts.first_reply_at, None);
        let conversation = s.get_conversation(&tenant, &customer).await.unwrap();
        assert_eq!(conversation.status, ConversationStatus::Unread);

        // Rolled back, a flow leaves nothing behind.
        let mut tx = s.db().begin().await.unwrap();
        s.send_flow(&mut tx, &tenant, &customer, &flow_id, &routing)
            .await
            .unwrap();
        drop(tx);
        let after = s
            .list_messages(&tenant, &customer, &PageRequest::default())
            .await
            .unwrap();
        assert_eq!(after.page.total_elements, 3);
    }

    crate::backend_tests!(a_flow_is_sent_in_order_inside_the_callers_transaction);

    fn fields(flow: &Flow) -> Vec<(String, String)> {
        let mut checks = Checks::new();
        for (i, m) in flow.messages.iter().enumerate() {
            check_message(&mut checks, i, m);
        }
        match checks.finish() {
            Ok(()) => vec![],
            Err(CoreError::Validation(errors)) => errors.into_iter().map(|e| (e.field, e.code)).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    #[test]
    fn messages_are_checked_like_messages_to_customers_and_named_by_index() {
        let flow: Flow = serde_json::from_value(serde_json::json!({
            "name": "Welcome",
            "messages": [
                {"type": "MESSAGE", "message": "  Hello  "},
                {"type": "CARD", "buttonText": "Open"},
                {"type": "FILE", "url": "ftp://example.com/a.pdf"},
                {"message": "no type"}
            ]
        }))
        .unwrap();
        assert_eq!(
            fields(&flow),
            [
                ("messages[1].buttonLink".to_string(), "required".to_string()),
                ("messages[2].url".to_string(), "invalid_url".to_string()),
                ("messages[3].type".to_string(), "required".to_string()),
            ]
        );
        let mut checks = Checks::new();
        let trimmed = check_message(&mut checks, 0, &flow.messages[0]);
        assert_eq!(trimmed.message.as_deref(), Some("Hello"));
    }
}
