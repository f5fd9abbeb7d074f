//! The `NO_ANSWER` timers: one per threshold the tenant's rules use, set when a
//! customer's message starts to wait; when one fires and the same message still
//! waits, the conversation is routed again with the reason `NO_ANSWER`.

use super::Reason;
use crate::{
    config::rules::RoutingRule,
    db::Tx,
    engine::snapshot,
    error::CoreResult,
    ids::{CustomerId, TenantId},
    jobs::{self, Job, JobKind},
    time::now_ms,
    Services,
};

impl Services {
    /// Schedules a timer for every `NO_ANSWER` threshold the tenant's rules use,
    /// counted from `since`.
    pub(super) async fn schedule_no_answer(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        since: i64,
    ) -> CoreResult<()> {
        let rules = Services::routing_rules_in_order_in(tx, tenant_id).await?;
        let mut thresholds: Vec<i64> = rules.iter().flat_map(RoutingRule::no_answer_seconds).collect();
        thresholds.sort_unstable();
        thresholds.dedup();
        for seconds in thresholds {
            jobs::schedule_payload(
                tx,
                Some(tenant_id),
                &format!("{tenant_id}:{customer_id}:{seconds}"),
                since + seconds * 1000,
                &NoAnswer {
                    customer_id: customer_id.clone(),
                    since,
                    seconds: Some(seconds),
                },
            )
            .await?;
        }
        Ok(())
    }

    /// A `NO_ANSWER` timer fired: routes the conversation again if the same message
    /// still waits.
    pub(crate) async fn fire_no_answer(&self, job: &Job) -> CoreResult<()> {
        let (
            Some(tenant_id),
            Some(NoAnswer {
                customer_id,
                since,
                seconds,
            }),
        ) = (job.tenant_id.as_ref(), job.read::<NoAnswer>())
        else {
            return Ok(());
        };
        let customer_id = &customer_id;
        let mut tx = self.db().begin().await?;
        let Some(mut facts) = snapshot::still_waiting(&mut tx, tenant_id, customer_id, since).await? else {
            return Ok(());
        };
        // The rules see at least the threshold this timer is for, even if this
        // instance's clock runs a little behind the one that scheduled it.
        if let Some(seconds) = seconds {
            facts.awaiting_since = Some(since.min(now_ms() - seconds * 1000));
        }
        let effects = self.route_in(&mut tx, tenant_id, &facts, Reason::NoAnswer).await?;
        effects.announce(self, &mut tx, tenant_id).await?;
        tx.commit().await?;
        effects.publish(self, tenant_id);
        Ok(())
    }
}

/// A waiting message reached a `NO_ANSWER` threshold ([`JobKind::NoAnswer`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct NoAnswer {
    /// The customer whose message waits.
    customer_id: CustomerId,
    /// When the waiting message came, unix ms: a later message is another wait.
    since: i64,
    /// The threshold, seconds (timers set before it was carried have none).
    seconds: Option<i64>,
}

impl jobs::Payload for NoAnswer {
    const KIND: JobKind = JobKind::NoAnswer;
}
