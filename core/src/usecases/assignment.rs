//! A person assigns a customer to an agent or a team, or to nobody (REST
//! `PUT /customer/{id}/assign` and the inbox's assignment menu).

use crate::{
    audit::Actor,
    customers::{Assignment, Customer},
    engine::dispatch,
    error::CoreResult,
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    validate::Checks,
    Services,
};

impl Services {
    /// Assigns a customer to a user or a team, or to nobody when both are omitted.
    pub async fn assign_customer(
        &self,
        tenant_id: &TenantId,
        id: &CustomerId,
        assignment: Assignment,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        // Read: the customer exists, and the assignee is the tenant's.
        self.get_customer(tenant_id, id).await?;
        let mut checks = Checks::new();
        let (user, team) = self
            .resolve_assignment(
                tenant_id,
                &mut checks,
                ("userId", assignment.user_id.as_deref()),
                ("teamId", assignment.team_id.as_deref()),
            )
            .await?;
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        // Write, with what every assignment makes happen (audit, webhook, watchdogs).
        let customer = dispatch::assign(&mut tx, tenant_id, id, user.as_deref(), team.as_deref(), actor).await?;
        // A person decided: the conversation leaves any routing queue, and capacity
        // may have moved between agents.
        dispatch::assigned_by_hand(&mut tx, tenant_id, id).await?;
        // Commit, then tell the screens.
        self.commit_live(tx, tenant_id, id, LiveEvent::Assigned).await?;
        Ok(customer)
    }
}
