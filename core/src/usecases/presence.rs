//! An agent sets their status (online, away, offline), in one transaction:
//! the presence intervals move, and an agent who can take conversations now
//! drains the queue; after the commit, one who went offline hands their
//! conversations on (`engine::dispatch`).

use crate::{
    engine::queue,
    error::CoreResult,
    ids::TenantId,
    reports::presence::{self, PresenceStatus},
    time::now_ms,
    Services,
};

impl Services {
    /// Sets the agent's status: the current `ONLINE`/`AWAY` interval closes and the
    /// new one opens (none for `OFFLINE`); the agent counts as signed in.
    pub async fn set_presence(&self, tenant_id: &TenantId, user_id: &str, status: PresenceStatus) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let Some(before) = presence::set_in(&mut tx, tenant_id, user_id, status, now_ms()).await? else {
            return tx.commit().await;
        };
        if status != PresenceStatus::Offline {
            // The agent may take queued conversations now.
            queue::schedule_drain(&mut tx, tenant_id).await?;
        }
        tx.commit().await?;
        if status == PresenceStatus::Offline && before != PresenceStatus::Offline {
            self.agent_went_offline(tenant_id, user_id).await?;
        }
        Ok(())
    }
}
