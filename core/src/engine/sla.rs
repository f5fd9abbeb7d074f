//! SLA clocks (README, "SLA"): how long a waiting customer may wait for an answer,
//! counted in business hours.
//!
//! - A customer message that starts a wait (nothing was waiting before it) starts a
//!   clock for every active SLA rule whose conditions hold at that moment: the
//!   first-response clock (`trigger.firstResponseSeconds`) while the conversation has
//!   had no answer since it started or reopened, else the second-response clock
//!   (`trigger.secondResponseSeconds`). Starting counts `SLA_1_RULE_MATCH_COUNT` or
//!   `SLA_2_RULE_MATCH_COUNT`.
//! - A rule with a `NO_ANSWER {seconds}` condition is about slow answers: its
//!   clock starts only once the message has waited that long unanswered (a
//!   durable `sla.start` timer), if the rule's conditions hold then. It counts
//!   from the message all the same.
//! - The clock runs only while the tenant's business hours are open (Settings →
//!   Workspace; around the clock without them). Its deadline is the instant at which
//!   that much open time has passed.
//! - A person's or integration's answer stops the clock as met. Closing the
//!   conversation (`DONE`) stops it too, without a miss. Messages of the system
//!   (system messages, flows) do not stop it.
//! - At the deadline a running clock is missed (`SLA_1_RULE_MISS_COUNT` or
//!   `SLA_2_RULE_MISS_COUNT`), and the miss is sent: to the assigned agent, else to
//!   the members of the assigned team, else to the rule's receivers; with
//!   `watchdogEnabled` the rule's receivers are told as well.

use chrono::{DateTime, Utc};

use super::{
    alerts,
    snapshot::{self, ConversationFacts},
};
use crate::{
    config::{
        rules::{Channel, Condition, SlaRule},
        watchdogs::{ReceiverType, WatchdogReceiver},
    },
    db::Tx,
    error::CoreResult,
    ids::{CustomerId, TenantId},
    jobs::{self, Job, JobKind},
    reports::{catalogue, facts},
    time::{from_ms, now_ms},
    with_tx, Services,
};

/// The seconds of a `NO_ANSWER` condition.
fn no_answer_seconds(condition: &Condition) -> Option<i64> {
    match condition {
        Condition::NoAnswer { seconds } => Some(*seconds),
        _ => None,
    }
}

fn clock_key(tenant_id: &TenantId, customer_id: &CustomerId, clock_id: &str) -> String {
    format!("{tenant_id}:{customer_id}:{clock_id}")
}

/// Stops a conversation's running clocks in `tx`, ending them as `state` (`MET` or
/// `CLOSED`), and cancels their deadlines.
pub(crate) async fn stop_clocks(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    state: &str,
) -> CoreResult<()> {
    let stopped = with_tx!(tx, |conn| {
        sqlx::query(
        "update sla_clocks set state = $3, ended_at = $4 where tenant_id = $1 and customer_id = $2 and state = 'RUNNING'"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .bind(state)
    .bind(now_ms())
    .execute(conn)
    .await
    .map(|r| r.rows_affected())
    })?;
    let prefix = format!("{tenant_id}:{customer_id}:");
    if stopped > 0 {
        jobs::cancel_prefix(tx, JobKind::SlaDeadline, &prefix).await?;
    }
    // Clocks that would have started once the wait grew long enough never will.
    jobs::cancel_prefix(tx, JobKind::SlaStart, &prefix).await?;
    Ok(())
}

impl Services {
    /// A customer message started a wait at `since` (unix ms): starts the clocks of
    /// the matching SLA rules, in `tx`.
    pub(crate) async fn start_sla_clocks(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        facts: &ConversationFacts,
        since: i64,
    ) -> CoreResult<()> {
        let rules: Vec<SlaRule> = Services::config_all_in::<SlaRule>(tx, tenant_id)
            .await?
            .into_iter()
            .filter(|r| r.active != Some(false) && r.trigger.is_some())
            .collect();
        if rules.is_empty() {
            return Ok(());
        }
        let hours = self
            .schedules_for(tx, tenant_id, rules.iter().flat_map(|r| r.conditions.iter()))
            .await?;
        let started: DateTime<Utc> = from_ms(since);
        let situation = facts.situation(Channel::Chat, started, &hours);
        let trigger_no: i64 = if facts.first_reply_at.is_none() { 1 } else { 2 };
        for rule in rules {
            let Some(rule_id) = rule.meta.id.as_deref() else {
                continue;
            };
            // A rule about slow answers is decided once the wait is that long.
            if let Some(seconds) = rule.conditions.iter().filter_map(no_answer_seconds).max() {
                jobs::schedule_payload(
                    tx,
                    Some(tenant_id),
                    &format!("{tenant_id}:{}:{rule_id}", facts.customer_id),
                    since + seconds * 1000,
                    &SlaStart {
                        customer_id: facts.customer_id.clone(),
                        since,
                        rule_id: rule_id.to_string(),
                        trigger_no,
                    },
                )
                .await?;
                continue;
            }
            if rule
                .conditions
                .iter()
                .all(|c| super::routing::condition_holds(c, &situation))
            {
                self.start_clock(tx, tenant_id, facts, &rule, since, trigger_no).await?;
            }
        }
        Ok(())
    }

    /// A message waited the `NO_ANSWER` seconds of an SLA rule: if it still
    /// waits, and the rule holds now, its clock starts, counting from the
    /// message.
    pub(crate) async fn fire_sla_start(&self, job: &Job) -> CoreResult<()> {
        let (
            Some(tenant_id),
            Some(SlaStart {
                customer_id,
                since,
                rule_id,
                trigger_no,
            }),
        ) = (job.tenant_id.as_ref(), job.read::<SlaStart>())
        else {
            return Ok(());
        };
        let (customer_id, rule_id) = (&customer_id, rule_id.as_str());
        let mut tx = self.db().begin().await?;
        let Some(mut facts) = snapshot::still_waiting(&mut tx, tenant_id, customer_id, since).await? else {
            return Ok(());
        };
        let Ok(rule) = self.config_get::<SlaRule>(tenant_id, rule_id).await else {
            return Ok(());
        };
        if rule.active == Some(false) || rule.trigger.is_none() {
            return Ok(());
        }
        // The rule sees at least the wait this timer is for, even if this
        // instance's clock runs a little behind the one that scheduled it.
        let now = now_ms();
        if let Some(seconds) = rule.conditions.iter().filter_map(no_answer_seconds).max() {
            facts.awaiting_since = Some(since.min(now - seconds * 1000));
        }
        let hours = self.schedules_for(&mut tx, tenant_id, rule.conditions.iter()).await?;
        let situation = facts.situation(Channel::Chat, from_ms(now), &hours);
        if rule
            .conditions
            .iter()
            .all(|c| super::routing::condition_holds(c, &situation))
        {
            self.start_clock(&mut tx, tenant_id, &facts, &rule, since, trigger_no)
                .await?;
        }
        tx.commit().await
    }

    /// Starts `rule`'s clock for the wait that began at `since`, in `tx`: counts
    /// the match and schedules the deadline, at that much open business time.
    async fn start_clock(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        facts: &ConversationFacts,
        rule: &SlaRule,
        since: i64,
        trigger_no: i64,
    ) -> CoreResult<()> {
        let (Some(rule_id), Some(trigger)) = (rule.meta.id.as_deref(), rule.trigger.as_ref()) else {
            return Ok(());
        };
        let settings = self.engine_settings(tenant_id).await?;
        let business = self
            .business_schedule(tenant_id, settings.business_hours_id.as_deref())
            .await?;
        let seconds = if trigger_no == 1 {
            trigger.first_response_seconds
        } else {
            trigger.second_response_seconds
        };
        // Hours that never open again give no deadline: the clock waits.
        let due = business
            .add_open_time(from_ms(since), seconds)
            .map_or(i64::MAX, |d| d.timestamp_millis());
        let clock_id = uuid::Uuid::now_v7().to_string();
        with_tx!(tx, |conn| sqlx::query(
            "insert into sla_clocks (id, tenant_id, customer_id, rule_id, trigger_no, started_at, due_at, state) \
             values ($1, $2, $3, $4, $5, $6, $7, 'RUNNING')"
        )
        .bind(&clock_id)
        .bind(tenant_id)
        .bind(&facts.customer_id)
        .bind(rule_id)
        .bind(trigger_no)
        .bind(since)
        .bind(due)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let fact = facts::Fact {
            kind: if trigger_no == 1 {
                catalogue::SLA_1_MATCH
            } else {
                catalogue::SLA_2_MATCH
            },
            at: since,
            value: 1,
            agent: facts.assigned_user.as_deref(),
            dim: Some(rule_id),
            subject: Some(&facts.customer_id),
            ..facts::Fact::default()
        };
        facts::record(tx, tenant_id, &fact).await?;
        if due != i64::MAX {
            jobs::schedule_payload(
                tx,
                Some(tenant_id),
                &clock_key(tenant_id, &facts.customer_id, &clock_id),
                due,
                &SlaDeadline {
                    clock_id: clock_id.clone(),
                },
            )
            .await?;
        }
        Ok(())
    }

    /// An SLA deadline passed: a clock still running is missed, counted and sent.
    pub(crate) async fn fire_sla_deadline(&self, job: &Job) -> CoreResult<()> {
        let (Some(tenant_id), Some(SlaDeadline { clock_id })) = (job.tenant_id.as_ref(), job.read::<SlaDeadline>())
        else {
            return Ok(());
        };
        let clock_id = clock_id.as_str();
        let mut tx = self.db().begin().await?;
        // Claims the clock: of two runners, only the one whose update ends it sends.
        let missed = with_tx!(&mut tx, |conn| {
            sqlx::query(
            "update sla_clocks set state = 'MISSED', ended_at = $3 where tenant_id = $1 and id = $2 and state = 'RUNNING'"
        )
        .bind(tenant_id)
        .bind(clock_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        if missed == 0 {
            return Ok(());
        }
        type ClockRow = (CustomerId, String, i64, i64, Option<String>, Option<String>);
        let (customer_id, rule_id, trigger_no, started_at, user, team): ClockRow =
            with_tx!(&mut tx, |conn| sqlx::query_as(
                "select k.customer_id, k.rule_id, k.trigger_no, k.started_at, c.assigned_user_id, c.assigned_team_id \
                 from sla_clocks k join customers c on c.tenant_id = k.tenant_id and c.id = k.customer_id \
                 where k.tenant_id = $1 and k.id = $2"
            )
            .bind(tenant_id)
            .bind(clock_id)
            .fetch_one(conn)
            .await)?;
        let fact = facts::Fact {
            kind: if trigger_no == 1 {
                catalogue::SLA_1_MISS
            } else {
                catalogue::SLA_2_MISS
            },
            at: started_at,
            value: 1,
            agent: user.as_deref(),
            dim: Some(&rule_id),
            subject: Some(&customer_id),
            ..facts::Fact::default()
        };
        facts::record(&mut tx, tenant_id, &fact).await?;
        let rule = self.config_get::<SlaRule>(tenant_id, &rule_id).await.ok();
        let mut receivers: Vec<WatchdogReceiver> = Vec::new();
        if let Some(user) = &user {
            receivers.push(user_receiver(user));
        } else if let Some(team) = &team {
            let members: Vec<String> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
                "select m.user_id from team_members m join teams t on t.id = m.team_id \
                 where t.tenant_id = $1 and m.team_id = $2 order by m.position"
            )
            .bind(tenant_id)
            .bind(team)
            .fetch_all(conn)
            .await)?;
            receivers.extend(members.iter().map(|m| user_receiver(m)));
        }
        if let Some(rule) = &rule {
            if receivers.is_empty() || rule.watchdog_enabled == Some(true) {
                for r in &rule.receivers {
                    if !receivers.contains(r) {
                        receivers.push(r.clone());
                    }
                }
            }
        }
        let name = rule
            .as_ref()
            .and_then(|r| r.name.clone())
            .unwrap_or_else(|| rule_id.clone());
        let customer = self.get_customer(tenant_id, &customer_id).await.ok();
        let who = customer
            .as_ref()
            .map(crate::conversations::customer_name)
            .unwrap_or_else(|| customer_id.to_string());
        let alert = alerts::Alert::new(
            alerts::SLA_MISSED,
            format!("SLA missed: {name}"),
            format!(
                "{who} has waited since {} for a {} response.",
                from_ms(started_at).to_rfc3339(),
                if trigger_no == 1 { "first" } else { "second" }
            ),
            Some(format!("/inbox/{customer_id}")),
        );
        alerts::deliver(&mut tx, tenant_id, &receivers, &alert).await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(())
    }

    /// The running SLA deadlines of `customer_ids`: the earliest per conversation,
    /// as `(customer id, due at)`, for the inbox's countdown.
    pub async fn sla_deadlines(
        &self,
        tenant_id: &TenantId,
        customer_ids: &[String],
    ) -> CoreResult<Vec<(String, DateTime<Utc>)>> {
        if customer_ids.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (0..customer_ids.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "select customer_id, min(due_at) from sla_clocks where tenant_id = $1 and state = 'RUNNING' \
             and customer_id in ({}) group by customer_id",
            placeholders.join(", ")
        );
        let rows: Vec<(String, i64)> = crate::with_db!(self.db(), |pool| {
            let mut q = sqlx::query_as(&sql).bind(tenant_id);
            for id in customer_ids {
                q = q.bind(id);
            }
            q.fetch_all(pool).await
        })?;
        Ok(rows
            .into_iter()
            .filter(|(_, due)| *due != i64::MAX)
            .map(|(id, due)| (id, from_ms(due)))
            .collect())
    }
}

fn user_receiver(user_id: &str) -> WatchdogReceiver {
    WatchdogReceiver {
        kind: ReceiverType::User,
        value: user_id.to_string(),
    }
}

/// An SLA rule's wait reached its `NO_ANSWER` seconds ([`JobKind::SlaStart`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SlaStart {
    /// The customer whose message waits.
    customer_id: CustomerId,
    /// When the waiting message came, unix ms: a later message is another wait.
    since: i64,
    /// The rule whose clock may start.
    rule_id: String,
    /// The conversation's trigger number when the timer was set.
    trigger_no: i64,
}

impl jobs::Payload for SlaStart {
    const KIND: JobKind = JobKind::SlaStart;
}

/// An SLA clock's deadline ([`JobKind::SlaDeadline`]).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SlaDeadline {
    /// The clock that is missed unless it stopped meanwhile.
    clock_id: String,
}

impl jobs::Payload for SlaDeadline {
    const KIND: JobKind = JobKind::SlaDeadline;
}
