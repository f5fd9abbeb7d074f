//! A visitor asks for a video call from the chat: the conversation is routed
//! by the rules for `CALL` (`engine::calls`), and a call owned by whoever has
//! it then is started, with a waiting room (`appointments::calls`).

use chrono::Utc;

use crate::{
    audit::Actor,
    conversations::{Channel, Message},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    Services,
};

impl Services {
    /// A visitor asked for a video call from the chat: the conversation is
    /// routed by the rules for `CALL`, and a call owned by whoever has it
    /// then (notified in the dashboard) is started, with a waiting room.
    /// Returns the invitation. While a call of the customer's is still open,
    /// asking again returns its invitation and starts nothing; while the
    /// workspace is closed (its business hours), nothing is started
    /// (`Conflict`, code `closed`).
    pub async fn request_call(&self, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<Message> {
        if let Some(invitation) = self.open_call_invitation(tenant_id, customer_id).await? {
            return Ok(invitation);
        }
        let settings = self.engine_settings(tenant_id).await?;
        let schedule = self
            .business_schedule(tenant_id, settings.business_hours_id.as_deref())
            .await?;
        if !schedule.is_open(Utc::now()) {
            return Err(CoreError::Conflict {
                field: None,
                code: "closed",
                message: "the workspace is closed now (its business hours); leave a message instead".into(),
            });
        }
        let owner = self.route_call(tenant_id, customer_id).await?;
        let call = self
            .start_call(
                tenant_id,
                customer_id,
                owner.as_deref(),
                true,
                Channel::Automation,
                &Actor::system("routing"),
            )
            .await?;
        Ok(call.invitation)
    }
}
