//! Video calls asked for from the chat: routed by the rules for `CALL`, and
//! whoever gets the conversation is told.

use super::{alerts, reason::Reason, snapshot};
use crate::{
    conversations::lock_conversation,
    customers::{self, Customer},
    db::Tx,
    error::CoreResult,
    ids::{CustomerId, TenantId, UserId},
    live::LiveEvent,
    Services,
};

/// The notification kind of a visitor's call request.
pub const CALL_REQUESTED: &str = "CALL_REQUESTED";

impl Services {
    /// The visitor asked for a video call: the conversation is routed by the
    /// rules for `CALL` (`CALL_REQUESTED`), and whoever has it then is
    /// notified (or, when the call is queued, whoever the queue gives it to
    /// later). Returns that user, if any.
    pub(crate) async fn route_call(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
    ) -> CoreResult<Option<String>> {
        let mut tx = self.db().begin().await?;
        lock_conversation(&mut tx, tenant_id, customer_id).await?;
        let facts = snapshot::conversation_facts(&mut tx, tenant_id, customer_id).await?;
        let effects = self.route_in(&mut tx, tenant_id, &facts, Reason::CallRequested).await?;
        let customer = customers::customer_in(&mut tx, tenant_id, customer_id).await?;
        let assigned = customer.assigned_user.clone();
        let notified = match &assigned {
            Some(user_id) => {
                self.tell_of_call(&mut tx, tenant_id, &customer, &UserId::from(user_id.as_str()))
                    .await?
            }
            None => None,
        };
        effects.announce(self, &mut tx, tenant_id).await?;
        tx.commit().await?;
        effects.publish(self, tenant_id);
        if let Some(event) = notified {
            self.after_commit(tenant_id, &CustomerId::default(), event);
        }
        Ok(assigned)
    }

    /// Tells `user_id` in `tx` that the customer asks for a video call; the
    /// live event to publish after the commit, when the user is still there.
    pub(super) async fn tell_of_call(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer: &Customer,
        user_id: &UserId,
    ) -> CoreResult<Option<LiveEvent>> {
        let alert = alerts::Alert::new(
            CALL_REQUESTED,
            format!(
                "{} asks for a video call",
                crate::appointments::calls::customer_label(customer)
            ),
            "Open the conversation and join the call from its invitation.",
            Some(format!("/inbox/{}", customer.id)),
        );
        if !alerts::notify_user(tx, tenant_id, user_id, &alert).await? {
            return Ok(None);
        }
        let event = LiveEvent::Notification {
            user_id: user_id.clone(),
        };
        self.announce_live(tx, tenant_id, &CustomerId::default(), &event)
            .await?;
        Ok(Some(event))
    }
}
