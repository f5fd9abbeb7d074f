//! What routing rules send to customers: system messages, in the customer's
//! language where a translation exists (flows are sent by `config::flows`).

use super::snapshot::ConversationFacts;
use crate::{
    audit::Actor,
    config::system_messages::{translation, SystemMessage},
    conversations::{lock_conversation, Channel, Content, Message, MessageType},
    db::Tx,
    error::{CoreError, CoreResult},
    ids::TenantId,
    Services,
};

impl Services {
    /// Sends the system message `id` (or its translation for the customer) in
    /// `tx`, as the system: it answers nobody. `None` when the message is gone.
    /// Returns the message and the language it was sent in.
    pub(crate) async fn send_system_message(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        facts: &ConversationFacts,
        id: &str,
        actor: &Actor,
    ) -> CoreResult<Option<(Message, String)>> {
        let all = Services::config_all_in::<SystemMessage>(tx, tenant_id).await?;
        let Some(named) = all.iter().find(|m| m.meta.id.as_deref() == Some(id)) else {
            return Ok(None);
        };
        let settings = self.engine_settings(tenant_id).await?;
        let chosen = translation(named, &all, facts.language.as_deref(), &settings.language);
        let text = chosen
            .message
            .clone()
            .ok_or_else(|| CoreError::Internal(format!("system message {id} has no text")))?;
        let content = Content {
            kind: MessageType::Message,
            message: Some(text),
            url: None,
            button_text: None,
            button_link: None,
        };
        let from = lock_conversation(tx, tenant_id, &facts.customer_id).await?;
        let message = self
            .send_in(
                tx,
                tenant_id,
                &facts.customer_id,
                from,
                content,
                Channel::Automation,
                actor,
            )
            .await?;
        Ok(Some((message, chosen.language.clone().unwrap_or_default())))
    }
}
