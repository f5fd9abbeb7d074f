//! An agent sets their status (online, away, offline), in one transaction:
//! the presence intervals move, and an agent who can take conversations now
//! drains the queue; after the commit, one who went offline hands their
//! conversations on (`engine::dispatch`). Agents whose dashboard went silent
//! are swept the same way.

use crate::{
    engine::queue,
    error::CoreResult,
    ids::{TenantId, UserId},
    reports::presence::{self, PresenceStatus},
    time::now_ms,
    Services,
};

impl Services {
    /// Sets the agent's status: the current `ONLINE`/`AWAY` interval closes and the
    /// new one opens (none for `OFFLINE`); the agent counts as signed in.
    pub async fn set_presence(&self, tenant_id: &TenantId, user_id: &UserId, status: PresenceStatus) -> CoreResult<()> {
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

    /// Closes every open interval whose last heartbeat is older than `timeout_ms`,
    /// at that heartbeat. Agents whose dashboard went silent while online or
    /// away are gone: their open conversations are routed again. Returns how
    /// many intervals closed.
    pub async fn close_stale_presence(&self, timeout_ms: i64) -> CoreResult<usize> {
        let (closed, gone) = presence::close_stale(self.db(), now_ms() - timeout_ms).await?;
        for (tenant_id, user_id) in &gone {
            self.agent_went_offline(tenant_id, user_id).await?;
        }
        Ok(closed)
    }

    /// The agent signed out: every open interval closes now, and an agent who
    /// was online or away hands their conversations on.
    pub(crate) async fn presence_signed_out(&self, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let was_present = presence::close_all(&mut tx, tenant_id, user_id, now_ms()).await?;
        tx.commit().await?;
        if was_present {
            self.agent_went_offline(tenant_id, user_id).await?;
        }
        Ok(())
    }
}
