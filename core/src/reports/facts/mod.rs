//! Recording facts, and keeping the hourly and daily rollups in step.
//!
//! Every fact is written in the transaction of what it records, together with its
//! rollup rows (hourly, and daily in the tenant's zone): one for the total, one for
//! its agent, one for its second dimension (and, for visits, one for its visitor).
//! The rollup rows are added to as the transaction commits ([`add_rollup`]). A
//! fact is never changed afterwards, so rollups only ever grow by the values of new
//! facts, and recomputing a report from the raw facts gives the same numbers (the
//! property tests check exactly that).

mod conversation;

pub(crate) use conversation::{awaiting_since, conversation_started, message_counted, message_stored, status_changed};
use serde::{Deserialize, Serialize};

use super::catalogue::{
    ACTION_RULE_MATCH, COBROWSE, COBROWSE_PARTICIPANTS, COBROWSE_UNIVERSAL, COBROWSE_UNIVERSAL_PARTICIPANTS,
    CONFERENCE, CONFERENCE_PARTICIPANTS, ROUTING_RULE_MATCH, SLA_1_MATCH, SLA_1_MISS, SLA_2_MATCH, SLA_2_MISS,
};
use super::{
    days::{day_start, next_midnight, rollup_zone},
    window::HOUR,
};
use crate::{
    db::{SumTable, Tx},
    error::CoreResult,
    ids::TenantId,
    validate::Checks,
    with_tx, Services,
};
use chrono_tz::Tz;

/// One fact for `report_facts`.
#[derive(Debug, Clone, Default)]
pub struct Fact<'a> {
    /// The kind (see the constants in [`super::catalogue`]).
    pub kind: &'a str,
    /// When it happened (or started), unix ms.
    pub at: i64,
    /// 1 for a count, milliseconds for a duration, a number for an amount.
    pub value: i64,
    /// The agent it belongs to.
    pub agent: Option<&'a str>,
    /// The kind's second dimension (message type, rule id, reason, status).
    pub dim: Option<&'a str>,
    /// What it is about (customer, session, conference).
    pub subject: Option<&'a str>,
    /// Tags, for tag filters.
    pub tags: &'a [String],
    /// Facts from clients carry a key so a retried batch is recorded once.
    pub dedupe: Option<&'a str>,
}

/// Tags as stored: `|a|b|`, so `like '%|a|%'` finds one; `None` without tags.
pub(crate) fn tags_column(tags: &[String]) -> Option<String> {
    if tags.is_empty() {
        None
    } else {
        let mut sorted = tags.to_vec();
        sorted.sort();
        Some(format!("|{}|", sorted.join("|")))
    }
}

/// Writes a fact and its rollup rows. Returns false (and writes nothing) when a
/// fact with the same dedupe key was recorded before.
pub(crate) async fn record(tx: &mut Tx, tenant_id: &TenantId, fact: &Fact<'_>) -> CoreResult<bool> {
    let inserted = with_tx!(tx, |conn| sqlx::query(
        "insert into report_facts (tenant_id, kind, at, value, agent_id, dim, subject, tags, dedupe_key) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (tenant_id, kind, dedupe_key) do nothing"
    )
    .bind(tenant_id)
    .bind(fact.kind)
    .bind(fact.at)
    .bind(fact.value)
    .bind(fact.agent)
    .bind(fact.dim)
    .bind(fact.subject)
    .bind(tags_column(fact.tags))
    .bind(fact.dedupe)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    if inserted == 0 {
        return Ok(false);
    }
    let mut groups = Vec::with_capacity(2);
    if let Some(agent) = fact.agent {
        groups.push(("AGENT", agent));
    }
    if let Some(dim) = fact.dim {
        groups.push(("DIM", dim));
    }
    let zone = rollup_zone(tx, tenant_id).await?;
    add_rollup(tx, tenant_id, zone, fact.kind, fact.at, fact.value, 1, &groups);
    Ok(true)
}

/// The start of the UTC hour of `ms`.
pub(crate) fn hour_of(ms: i64) -> i64 {
    ms.div_euclid(HOUR) * HOUR
}

/// `[start, end)` cut at UTC hour edges and at local midnights in `zone`, so
/// each piece lies in one hourly and one daily rollup row: (piece start, ms).
pub(crate) fn rollup_pieces(zone: Tz, start: i64, end: i64) -> Vec<(i64, i64)> {
    let mut out = Vec::new();
    let mut t = start;
    while t < end {
        let next = (hour_of(t) + HOUR).min(next_midnight(zone, t)).min(end);
        out.push((t, next - t));
        t = next;
    }
    out
}

/// The hourly rollups: one row per kind, group and UTC hour.
static HOURLY: SumTable = SumTable {
    table: "report_rollups",
    keys: &["tenant_id", "kind", "group_kind", "hour", "group_key"],
    values: &["total", "samples"],
};

/// The daily rollups: one row per kind, group and local day in a zone.
static DAILY: SumTable = SumTable {
    table: "report_day_rollups",
    keys: &["tenant_id", "zone", "kind", "group_kind", "day", "group_key"],
    values: &["total", "samples"],
};

/// Adds `total`/`samples`, for something at instant `at`, to the rollup rows of
/// `kind`: the total row and one row per `(group_kind, key)`, both in the UTC
/// hour of `at` and in its local day in `zone` (the tenant's day-rollup zone).
/// Visitors are not kept per day: [`super::visitors`] counts them.
///
/// The rows are added to when the transaction commits ([`crate::db::Tx::add`]):
/// every write of a tenant adds to the same few rows, and on PostgreSQL the
/// first addition would otherwise lock them for the rest of the transaction.
#[allow(clippy::too_many_arguments)]
pub(crate) fn add_rollup(
    tx: &mut Tx,
    tenant_id: &TenantId,
    zone: Tz,
    kind: &str,
    at: i64,
    total: i64,
    samples: i64,
    groups: &[(&str, &str)],
) {
    let tenant = tenant_id.as_str();
    let (hour, day) = (hour_of(at), day_start(zone, at));
    for (group_kind, key) in std::iter::once(("", "")).chain(groups.iter().copied()) {
        let hourly = vec![tenant.into(), kind.into(), group_kind.into(), hour.into(), key.into()];
        tx.add(&HOURLY, hourly, &[total, samples]);
        if group_kind != "VISITOR" {
            let daily = vec![
                tenant.into(),
                zone.name().into(),
                kind.into(),
                group_kind.into(),
                day.into(),
                key.into(),
            ];
            tx.add(&DAILY, daily, &[total, samples]);
        }
    }
}

/// Which rule engine matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RuleKind {
    /// A routing rule.
    Routing,
    /// An action rule.
    Action,
}

/// Which SLA trigger an outcome belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SlaTrigger {
    /// `firstResponseSeconds`.
    FirstResponse,
    /// `secondResponseSeconds`.
    SecondResponse,
}

/// A finished co-browse session or conference.
#[derive(Debug, Clone, Default)]
pub struct MeetingFact {
    /// Its id; recording the same id twice records it once.
    pub id: String,
    /// The hosting agent.
    pub host_user_id: Option<String>,
    /// Start, unix ms.
    pub started_at: i64,
    /// End, unix ms.
    pub ended_at: i64,
    /// People who joined besides the host.
    pub participants: i64,
    /// Tags (co-browse tag filters).
    pub tags: Vec<String>,
}

/// What kind of meeting a [`MeetingFact`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeetingKind {
    /// Co-browsing started from the visitor script.
    Cobrowse,
    /// Universal co-browsing from generated links.
    UniversalCobrowse,
    /// A video conference.
    Conference,
}

impl Services {
    /// Records that a rule matched a conversation. Called by the rule engines.
    pub async fn record_rule_match(
        &self,
        tenant_id: &TenantId,
        kind: RuleKind,
        rule_id: &str,
        customer_id: Option<&str>,
        at: i64,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let fact = Fact {
            kind: match kind {
                RuleKind::Routing => ROUTING_RULE_MATCH,
                RuleKind::Action => ACTION_RULE_MATCH,
            },
            at,
            value: 1,
            dim: Some(rule_id),
            subject: customer_id,
            ..Fact::default()
        };
        record(&mut tx, tenant_id, &fact).await?;
        tx.commit().await
    }

    /// Records an SLA measurement of one trigger: it started at `at` and its target
    /// was `met` or missed. Called by the SLA engine.
    pub async fn record_sla_outcome(
        &self,
        tenant_id: &TenantId,
        rule_id: &str,
        trigger: SlaTrigger,
        customer_id: Option<&str>,
        at: i64,
        met: bool,
    ) -> CoreResult<()> {
        let (matched, missed) = match trigger {
            SlaTrigger::FirstResponse => (SLA_1_MATCH, SLA_1_MISS),
            SlaTrigger::SecondResponse => (SLA_2_MATCH, SLA_2_MISS),
        };
        let mut tx = self.db().begin().await?;
        let mut fact = Fact {
            kind: matched,
            at,
            value: 1,
            dim: Some(rule_id),
            subject: customer_id,
            ..Fact::default()
        };
        record(&mut tx, tenant_id, &fact).await?;
        if !met {
            fact.kind = missed;
            record(&mut tx, tenant_id, &fact).await?;
        }
        tx.commit().await
    }

    /// Records a finished co-browse session or conference: one fact for its length
    /// (at its start, agent = host) and one for its participants.
    pub async fn record_meeting(
        &self,
        tenant_id: &TenantId,
        kind: MeetingKind,
        meeting: &MeetingFact,
    ) -> CoreResult<()> {
        let mut checks = Checks::new();
        checks.required_text("id", Some(&meeting.id), 200);
        if meeting.ended_at < meeting.started_at {
            checks.push("endedAt", "before_start", "a meeting cannot end before it starts");
        }
        checks.in_range("participants", meeting.participants, 0..=10_000);
        checks.finish()?;
        let (length_kind, people_kind) = match kind {
            MeetingKind::Cobrowse => (COBROWSE, COBROWSE_PARTICIPANTS),
            MeetingKind::UniversalCobrowse => (COBROWSE_UNIVERSAL, COBROWSE_UNIVERSAL_PARTICIPANTS),
            MeetingKind::Conference => (CONFERENCE, CONFERENCE_PARTICIPANTS),
        };
        let mut tx = self.db().begin().await?;
        let mut fact = Fact {
            kind: length_kind,
            at: meeting.started_at,
            value: meeting.ended_at - meeting.started_at,
            agent: meeting.host_user_id.as_deref(),
            subject: Some(&meeting.id),
            tags: &meeting.tags,
            dedupe: Some(&meeting.id),
            ..Fact::default()
        };
        if record(&mut tx, tenant_id, &fact).await? {
            fact.kind = people_kind;
            fact.value = meeting.participants;
            record(&mut tx, tenant_id, &fact).await?;
        }
        tx.commit().await
    }
}

#[cfg(test)]
mod tests;
