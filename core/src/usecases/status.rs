//! An agent or an integration sets a conversation's status (spec 3), in one
//! transaction: the status moves and is audited, the engines react (a `DONE`
//! conversation leaves the queue and its clocks stop; a reopened one is routed
//! again), the status events are queued, a closed conversation's transcript
//! is mailed where the workspace says so, and after the commit the inbox hears
//! it.

use crate::{
    audit::{self, Actor},
    conversations::{Conversation, ConversationStatus, StatusIn, Trigger},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    Services,
};

impl Services {
    /// Sets a conversation's status. Setting the current status again is no change and
    /// fires nothing.
    pub async fn set_conversation_status(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: StatusIn,
        actor: &Actor,
    ) -> CoreResult<Conversation> {
        let Some(status) = input.status else {
            return Err(CoreError::invalid("status", "required", "status is required"));
        };
        let mut tx = self.db().begin().await?;
        let (from, to) = self
            .apply_trigger(&mut tx, tenant_id, customer_id, Trigger::Set(status), actor)
            .await?;
        if from != to {
            audit::record(
                &mut tx,
                Some(tenant_id),
                actor,
                "conversation.status",
                "customer",
                Some(customer_id),
            )
            .await?;
        }
        let effects = self.on_status_set(&mut tx, tenant_id, customer_id, from, to).await?;
        if to == ConversationStatus::Done && from != to {
            self.transcript_on_close(&mut tx, tenant_id, customer_id).await?;
        }
        let conversation = self.conversation_in(&mut tx, tenant_id, customer_id).await?;
        let event = LiveEvent::Conversation;
        self.announce_live(&mut tx, tenant_id, customer_id, &event).await?;
        effects.announce(self, &mut tx, tenant_id).await?;
        tx.commit().await?;
        self.after_commit(tenant_id, customer_id, event);
        effects.publish(self, tenant_id);
        Ok(conversation)
    }
}
