//! The routing queue: conversations a `QUEUE` action could not give anyone yet
//! wait in `routing_queue`, oldest first, and are offered again whenever
//! capacity may have freed (a `routing.drain` job per tenant), until their
//! `maxWaitSeconds` ends and the queuing rule's else-rules decide.

use chrono::Utc;
use serde_json::json;

use super::{
    reason::Reason,
    routing::{self, Decision, RulePath},
    snapshot,
};
use crate::{
    config::rules::{AgentState, Channel, QueueTarget, RoutingRule},
    conversations::lock_conversation,
    db::Tx,
    error::CoreResult,
    ids::{CustomerId, TenantId, UserId},
    jobs::{self, Job, JobKind},
    live::LiveEvent,
    time::now_ms,
    with_db, with_tx, Services,
};

fn queue_key(tenant_id: &TenantId, customer_id: &CustomerId) -> String {
    format!("{tenant_id}:{customer_id}")
}

/// Asks for the tenant's queue to be offered again soon (a durable job, so that
/// it happens even if this instance stops right after the commit).
/// Only a tenant with queued conversations writes the job: every close and
/// presence change of a tenant would otherwise update the same row.
pub(crate) async fn schedule_drain(tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<()> {
    let queued: Option<i64> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select cast(1 as bigint) from routing_queue where tenant_id = $1 limit 1"
    )
    .bind(tenant_id)
    .fetch_optional(conn)
    .await)?;
    if queued.is_none() {
        return Ok(());
    }
    jobs::schedule(tx, Some(tenant_id), JobKind::Drain, tenant_id, now_ms(), &json!({})).await
}

pub(super) async fn leave_queue(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<()> {
    let removed = with_tx!(tx, |conn| sqlx::query(
        "delete from routing_queue where tenant_id = $1 and customer_id = $2"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    if removed > 0 {
        jobs::cancel(tx, JobKind::QueueTimeout, &queue_key(tenant_id, customer_id)).await?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn enqueue(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    from: &RulePath,
    channel: Channel,
    target: &QueueTarget,
    state: AgentState,
    now: i64,
    deadline: i64,
    decision_id: &str,
) -> CoreResult<()> {
    let target_json = serde_json::to_string(target).map_err(|e| crate::CoreError::Internal(e.to_string()))?;
    let state = match state {
        AgentState::Available => "AVAILABLE",
        AgentState::Online => "ONLINE",
        AgentState::Any => "ANY",
    };
    with_tx!(tx, |conn| {
        sqlx::query(
        "insert into routing_queue (tenant_id, customer_id, rule_id, rule_path, target, agent_state, channel, \
         enqueued_at, deadline_at, decision_id) values ($1, $2, $3, $4, $5, $6, $10, $7, $8, $9) \
         on conflict (tenant_id, customer_id) do update set rule_id = excluded.rule_id, rule_path = excluded.rule_path, \
         target = excluded.target, agent_state = excluded.agent_state, channel = excluded.channel, \
         enqueued_at = excluded.enqueued_at, deadline_at = excluded.deadline_at, decision_id = excluded.decision_id"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .bind(&from.rule_id)
    .bind(from.to_string())
    .bind(&target_json)
    .bind(state)
    .bind(now)
    .bind(deadline)
    .bind(decision_id)
    .bind(match channel {
        Channel::Chat => "CHAT",
        Channel::Call => "CALL",
    })
    .execute(conn)
    .await
    .map(|r| r.rows_affected())
    })?;
    jobs::schedule_payload(
        tx,
        Some(tenant_id),
        &queue_key(tenant_id, customer_id),
        deadline,
        &QueueTimeout {
            customer_id: customer_id.clone(),
            enqueued_at: now,
        },
    )
    .await
}

/// A queued conversation's longest wait ([`JobKind::QueueTimeout`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct QueueTimeout {
    /// The customer whose conversation waits.
    customer_id: CustomerId,
    /// When it was queued, unix ms: a later queuing is another wait.
    enqueued_at: i64,
}

impl jobs::Payload for QueueTimeout {
    const KIND: JobKind = JobKind::QueueTimeout;
}

impl Services {
    /// Offers the tenant's queued conversations again, oldest first; each in a
    /// transaction of its own. Returns how many were assigned.
    pub(crate) async fn drain_queue(&self, tenant_id: &TenantId) -> CoreResult<usize> {
        type Entry = (CustomerId, String, String, i64, String, String);
        let entries: Vec<Entry> = with_db!(self.db(), |pool| sqlx::query_as(
            "select customer_id, target, agent_state, enqueued_at, decision_id, channel from routing_queue \
             where tenant_id = $1 order by enqueued_at, customer_id limit 1000"
        )
        .bind(tenant_id)
        .fetch_all(pool)
        .await)?;
        let mut assigned = 0;
        // A target nobody could serve for an older conversation cannot serve a newer
        // one either in this pass: later conversations never jump the queue.
        let mut exhausted: Vec<(String, String)> = Vec::new();
        for (customer_id, target_json, state, enqueued_at, decision_id, channel) in entries {
            if exhausted.contains(&(target_json.clone(), state.clone())) {
                continue;
            }
            let Ok(target) = serde_json::from_str::<QueueTarget>(&target_json) else {
                continue;
            };
            let agent_state = match state.as_str() {
                "AVAILABLE" => AgentState::Available,
                "ONLINE" => AgentState::Online,
                _ => AgentState::Any,
            };
            let mut tx = self.db().begin().await?;
            if lock_conversation(&mut tx, tenant_id, &customer_id).await.is_err() {
                continue;
            }
            let still: Option<i64> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
                "select enqueued_at from routing_queue where tenant_id = $1 and customer_id = $2"
            )
            .bind(tenant_id)
            .bind(&customer_id)
            .fetch_optional(conn)
            .await)?;
            if still != Some(enqueued_at) {
                continue;
            }
            match self
                .offer(&mut tx, tenant_id, &customer_id, &target, agent_state, None)
                .await?
            {
                Some(customer) => {
                    super::log::assigned_from_queue(
                        &mut tx,
                        tenant_id,
                        &decision_id,
                        customer.assigned_user.as_deref(),
                    )
                    .await?;
                    // A visitor waiting for a call: its agent is told now.
                    let told = match (&customer.assigned_user, channel.as_str()) {
                        (Some(user_id), "CALL") => {
                            self.tell_of_call(&mut tx, tenant_id, &customer, &UserId::from(user_id.as_str()))
                                .await?
                        }
                        _ => None,
                    };
                    self.commit_live(tx, tenant_id, &customer_id, LiveEvent::Assigned)
                        .await?;
                    if let Some(event) = told {
                        self.after_commit(tenant_id, &CustomerId::default(), event);
                    }
                    assigned += 1;
                }
                None => exhausted.push((target_json, state)),
            }
        }
        Ok(assigned)
    }

    /// A queued conversation waited its longest: the queuing rule's else-rules decide.
    pub(crate) async fn fire_queue_timeout(&self, job: &Job) -> CoreResult<()> {
        let (
            Some(tenant_id),
            Some(QueueTimeout {
                customer_id,
                enqueued_at,
            }),
        ) = (job.tenant_id.as_ref(), job.read::<QueueTimeout>())
        else {
            return Ok(());
        };
        let customer_id = &customer_id;
        let mut tx = self.db().begin().await?;
        if lock_conversation(&mut tx, tenant_id, customer_id).await.is_err() {
            return Ok(());
        }
        let entry: Option<(String, i64, String)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select rule_path, enqueued_at, channel from routing_queue where tenant_id = $1 and customer_id = $2"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .fetch_optional(conn)
        .await)?;
        let Some((path, _, channel)) = entry.filter(|(_, at, _)| *at == enqueued_at) else {
            return Ok(());
        };
        // A call waits for the rules of calls, a chat for those of chats.
        let channel = if channel == "CALL" {
            Channel::Call
        } else {
            Channel::Chat
        };
        leave_queue(&mut tx, tenant_id, customer_id).await?;
        let facts = snapshot::conversation_facts(&mut tx, tenant_id, customer_id).await?;
        let rules = Services::routing_rules_in_order_in(&mut tx, tenant_id).await?;
        let hours = self
            .schedules_for(&mut tx, tenant_id, rules.iter().flat_map(RoutingRule::all_conditions))
            .await?;
        let decision = match RulePath::parse(&path) {
            Some(from) => routing::decide_else(&rules, &from, &facts.situation(channel, Utc::now(), &hours)),
            None => Decision::default(),
        };
        let effects = self
            .apply(&mut tx, tenant_id, &facts, Reason::QueueTimeout, channel, decision)
            .await?;
        effects.announce(self, &mut tx, tenant_id).await?;
        tx.commit().await?;
        effects.publish(self, tenant_id);
        Ok(())
    }
}
