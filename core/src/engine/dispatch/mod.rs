//! Routing on live traffic: reads the snapshot, asks [`super::routing`] for a
//! decision, and applies it in the transaction of the event that caused it.
//!
//! When a conversation is routed (see the README, "Routing"):
//! - `NEW`: the first customer message of a conversation that is not assigned yet;
//! - `REOPENED`: a `DONE` conversation moves to `UNREAD` (a customer message, or an
//!   agent or integration setting the status);
//! - `NO_ANSWER`: a waiting customer message reached the `seconds` of a `NO_ANSWER`
//!   condition (a durable timer; the agent who did not answer is passed over);
//! - `AGENT_OFFLINE`: the assigned agent went offline while the conversation was open
//!   (they are passed over);
//! - `QUEUE_TIMEOUT`: a queued conversation waited `maxWaitSeconds`; only the queuing
//!   rule's else-rules are tried (for the channel it was queued on);
//! - `CALL_REQUESTED`: the visitor asked for a video call from the chat. Only this
//!   routing tries the rules for `CALL`; every other tries those for `CHAT`.
//!
//! A `QUEUE` action offers the conversation to its target at once ([`super::balance`]);
//! when nobody can take it, it waits in the routing queue ([`super::queue`]) and is
//! offered again, oldest first, whenever capacity may have freed (a conversation
//! closed or reassigned, an agent came online).
//! Every decision is written to the match log (`routing_decisions`) and counted in
//! the rule report.

mod no_answer;

use chrono::Utc;

use super::{
    balance,
    queue::{enqueue, leave_queue, schedule_drain},
    reason::Reason,
    routing::{self, Decision, Planned},
    snapshot::{self, ConversationFacts},
};
use crate::{
    audit::Actor,
    config::rules::{AgentState, Channel, QueueTarget, RoutingRule},
    conversations::{lock_conversation, ConversationStatus},
    customers::{self, Customer},
    db::Tx,
    error::CoreResult,
    ids::{CustomerId, TenantId, UserId},
    jobs::{self, JobKind},
    live::LiveEvent,
    reports::{catalogue, facts},
    time::now_ms,
    with_db, with_tx, Services,
};

/// Changes a routing made that live screens show; published after the commit.
#[derive(Debug, Default)]
pub(crate) struct Effects {
    /// Per customer, what changed.
    pub live: Vec<(CustomerId, LiveEvent)>,
}

impl Effects {
    /// Announces them in `tx` (to other instances, on PostgreSQL).
    pub(crate) async fn announce(&self, services: &Services, tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<()> {
        for (customer_id, event) in &self.live {
            services.announce_live(tx, tenant_id, customer_id, event).await?;
        }
        Ok(())
    }

    /// Publishes them to this instance, after the commit.
    pub(crate) fn publish(self, services: &Services, tenant_id: &TenantId) {
        for (customer_id, event) in self.live {
            services.after_commit(tenant_id, &customer_id, event);
        }
    }
}

/// The actor of everything the engine does, in the audit log and webhooks.
fn engine_actor() -> Actor {
    Actor::system("routing")
}

/// The conversation was answered (a person's or an integration's message): its
/// `NO_ANSWER` timers and SLA clocks stop.
pub(crate) async fn answered(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<()> {
    let prefix = format!("{tenant_id}:{customer_id}:");
    jobs::cancel_prefix(tx, JobKind::NoAnswer, &prefix).await?;
    super::sla::stop_clocks(tx, tenant_id, customer_id, "MET").await
}

/// A person assigned the conversation: it leaves the routing queue, and the
/// tenant's queue is offered again (the previous agent may have room now).
pub(crate) async fn assigned_by_hand(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<()> {
    leave_queue(tx, tenant_id, customer_id).await?;
    schedule_drain(tx, tenant_id).await
}

/// The conversation was closed: timers, clocks and queue place go, and its agent
/// has room for the next one.
pub(crate) async fn closed(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<()> {
    let prefix = format!("{tenant_id}:{customer_id}:");
    jobs::cancel_prefix(tx, JobKind::NoAnswer, &prefix).await?;
    super::sla::stop_clocks(tx, tenant_id, customer_id, "CLOSED").await?;
    leave_queue(tx, tenant_id, customer_id).await?;
    schedule_drain(tx, tenant_id).await
}

/// The outcome of one routing, for the match log.
struct Applied {
    actions: Vec<String>,
    result: &'static str,
    user_id: Option<UserId>,
}

/// Assigns a customer in `tx`, by hand or by routing, and tells the
/// `CUSTOMER_ASSIGNED` watchdogs: every assignment passes here.
pub(crate) async fn assign(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    user: Option<&str>,
    team: Option<&str>,
    actor: &Actor,
) -> CoreResult<Customer> {
    let customer = customers::assign_in(tx, tenant_id, customer_id, user, team, actor).await?;
    super::watchdogs::customer_assigned(tx, tenant_id, &customer).await?;
    Ok(customer)
}

impl Services {
    /// A customer message arrived in `tx` (the conversation is locked; it had status
    /// `from`, and waited for an answer since `waiting_before`): routes it when it
    /// needs routing, and starts the SLA clocks and `NO_ANSWER` timers when the
    /// message starts a wait.
    pub(crate) async fn on_customer_message(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        from: ConversationStatus,
        waiting_before: Option<i64>,
    ) -> CoreResult<Effects> {
        let facts = snapshot::conversation_facts(tx, tenant_id, customer_id).await?;
        let mut effects = Effects::default();
        if from == ConversationStatus::Done {
            effects = self.route_in(tx, tenant_id, &facts, Reason::Reopened).await?;
        } else if facts.routing_id.is_none() && facts.assigned_user.is_none() && facts.assigned_team.is_none() {
            effects = self.route_in(tx, tenant_id, &facts, Reason::New).await?;
        }
        if waiting_before.is_none() {
            if let Some(since) = facts.awaiting_since {
                self.schedule_no_answer(tx, tenant_id, customer_id, since).await?;
                self.start_sla_clocks(tx, tenant_id, &facts, since).await?;
            }
        }
        Ok(effects)
    }

    /// An agent or integration moved the conversation from `from` to `to` in `tx`.
    pub(crate) async fn on_status_set(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        from: ConversationStatus,
        to: ConversationStatus,
    ) -> CoreResult<Effects> {
        if to == ConversationStatus::Done {
            closed(tx, tenant_id, customer_id).await?;
        } else if from == ConversationStatus::Done && to == ConversationStatus::Unread {
            let facts = snapshot::conversation_facts(tx, tenant_id, customer_id).await?;
            return self.route_in(tx, tenant_id, &facts, Reason::Reopened).await;
        }
        Ok(Effects::default())
    }

    /// Routes a conversation (locked in `tx`) by the tenant's rules. A tenant
    /// without routing rules routes nothing and logs nothing.
    pub(crate) async fn route_in(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        facts: &ConversationFacts,
        reason: Reason,
    ) -> CoreResult<Effects> {
        let rules = Services::routing_rules_in_order_in(tx, tenant_id).await?;
        if rules.is_empty() {
            return Ok(Effects::default());
        }
        let hours = self
            .schedules_for(tx, tenant_id, rules.iter().flat_map(RoutingRule::all_conditions))
            .await?;
        let channel = reason.channel();
        let decision = routing::decide(&rules, &facts.situation(channel, Utc::now(), &hours));
        self.apply(tx, tenant_id, facts, reason, channel, decision).await
    }

    /// Carries out `decision` for the conversation in `tx`, and logs it.
    pub(super) async fn apply(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        facts: &ConversationFacts,
        reason: Reason,
        channel: Channel,
        decision: Decision,
    ) -> CoreResult<Effects> {
        let decision_id = uuid::Uuid::now_v7().to_string();
        let now = now_ms();
        let mut effects = Effects::default();
        let mut applied = Applied {
            actions: Vec::new(),
            result: if decision.matched.is_some() {
                "MATCHED"
            } else {
                "NO_MATCH"
            },
            user_id: None,
        };
        let exclude = if reason.passes_over() {
            facts.assigned_user.clone()
        } else {
            None
        };
        for planned in &decision.plan {
            match planned {
                Planned::Queue {
                    from,
                    target,
                    agent_state,
                    max_wait_seconds,
                } => {
                    let label = format!("QUEUE {} {}", routing::target_kind(target), target.value);
                    match self
                        .offer(
                            tx,
                            tenant_id,
                            &facts.customer_id,
                            target,
                            *agent_state,
                            exclude.as_deref(),
                        )
                        .await?
                    {
                        Some(customer) => {
                            applied.actions.push(format!(
                                "{label}: assigned to {}",
                                customer.assigned_user.clone().unwrap_or_default()
                            ));
                            applied.result = "ASSIGNED";
                            applied.user_id = customer.assigned_user.clone().map(UserId::from);
                            effects.live.push((facts.customer_id.clone(), LiveEvent::Assigned));
                        }
                        None => {
                            let deadline = now + max_wait_seconds * 1000;
                            enqueue(
                                tx,
                                tenant_id,
                                &facts.customer_id,
                                from,
                                channel,
                                target,
                                *agent_state,
                                now,
                                deadline,
                                &decision_id,
                            )
                            .await?;
                            applied
                                .actions
                                .push(format!("{label}: queued for up to {max_wait_seconds} s"));
                            applied.result = "QUEUED";
                            if reason == Reason::AgentOffline {
                                // Nobody holds it while it waits: it shows as unassigned.
                                assign(tx, tenant_id, &facts.customer_id, None, None, &engine_actor()).await?;
                                effects.live.push((facts.customer_id.clone(), LiveEvent::Assigned));
                            }
                        }
                    }
                }
                Planned::SystemMessage { id } => {
                    match self
                        .send_system_message(tx, tenant_id, facts, id, &engine_actor())
                        .await?
                    {
                        Some((message, language)) => {
                            applied.actions.push(format!("SYSTEM_MESSAGE {id} in {language}"));
                            effects
                                .live
                                .push((facts.customer_id.clone(), LiveEvent::Message { message_id: message.id }));
                        }
                        None => applied.actions.push(format!("SYSTEM_MESSAGE {id}: not found")),
                    }
                }
                Planned::SendFlow { id } => {
                    let messages = self
                        .send_flow(tx, tenant_id, &facts.customer_id, id, &engine_actor())
                        .await?;
                    applied
                        .actions
                        .push(format!("SEND_FLOW {id}: {} messages", messages.len()));
                    for message in messages {
                        effects
                            .live
                            .push((facts.customer_id.clone(), LiveEvent::Message { message_id: message.id }));
                    }
                }
            }
        }
        applied
            .actions
            .extend(decision.skipped.iter().map(|s| format!("skipped {s}")));
        if applied.result == "MATCHED" && !decision.plan.is_empty() {
            applied.result = "MESSAGED";
        }
        let entry = super::log::Entry {
            id: &decision_id,
            customer_id: &facts.customer_id,
            reason,
            decision: &decision,
            actions: &applied.actions,
            result: applied.result,
            user_id: applied.user_id.as_deref(),
            at: now,
        };
        super::log::write(tx, tenant_id, &entry).await?;
        if let Some(path) = &decision.matched {
            // The rule report: one routing match per decision. (Action rules
            // count their own matches, reported by the visitor script.)
            let fact = facts::Fact {
                kind: catalogue::ROUTING_RULE_MATCH,
                at: now,
                value: 1,
                agent: applied.user_id.as_deref(),
                dim: Some(&path.rule_id),
                subject: Some(&facts.customer_id),
                ..facts::Fact::default()
            };
            facts::record(tx, tenant_id, &fact).await?;
        }
        Ok(effects)
    }

    /// Offers a conversation to `target`: assigns it to the agent balancing picks,
    /// if anyone can take it now.
    pub(super) async fn offer(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        target: &QueueTarget,
        state: AgentState,
        exclude: Option<&str>,
    ) -> CoreResult<Option<Customer>> {
        let mut candidates = snapshot::candidates(tx, tenant_id, target).await?;
        while let Some(chosen) = balance::pick(&candidates, state, exclude).cloned() {
            // Counted again under the agent's row lock: a concurrent assignment may
            // have taken the last place.
            let load = snapshot::lock_agent_load(tx, tenant_id, &chosen.user_id).await?;
            if load < chosen.capacity && (state != AgentState::Available || load == 0) {
                return Ok(Some(
                    self.assign_routed(tx, tenant_id, customer_id, &chosen.user_id).await?,
                ));
            }
            candidates.retain(|c| c.user_id != chosen.user_id);
        }
        Ok(None)
    }

    /// Assigns a routed conversation to `user_id`.
    async fn assign_routed(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        user_id: &UserId,
    ) -> CoreResult<Customer> {
        with_tx!(tx, |conn| sqlx::query(
            "update users set last_assigned_at = $3 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(user_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let customer = assign(tx, tenant_id, customer_id, Some(user_id), None, &engine_actor()).await?;
        leave_queue(tx, tenant_id, customer_id).await?;
        Ok(customer)
    }

    /// An agent went offline: each open conversation assigned to them is routed
    /// again, each in a transaction of its own.
    pub(crate) async fn agent_went_offline(&self, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<()> {
        let held: Vec<CustomerId> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from customers where tenant_id = $1 and assigned_user_id = $2 and status <> 'DONE'"
        )
        .bind(tenant_id)
        .bind(user_id)
        .fetch_all(pool)
        .await)?;
        for customer_id in held {
            let mut tx = self.db().begin().await?;
            if lock_conversation(&mut tx, tenant_id, &customer_id).await.is_err() {
                continue;
            }
            let facts = snapshot::conversation_facts(&mut tx, tenant_id, &customer_id).await?;
            if facts.assigned_user.as_deref() != Some(user_id) || facts.status == ConversationStatus::Done {
                continue;
            }
            let effects = self.route_in(&mut tx, tenant_id, &facts, Reason::AgentOffline).await?;
            effects.announce(self, &mut tx, tenant_id).await?;
            tx.commit().await?;
            effects.publish(self, tenant_id);
        }
        Ok(())
    }
}
