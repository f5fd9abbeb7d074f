//! What the engines read before they decide: the conversation, the opening hours
//! its rules name, and the agents of a queue's target.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};

use super::{
    balance::{Candidate, Presence},
    routing::Situation,
};
use crate::{
    config::{
        opening_hours::{schedule::Schedule, OpeningHours},
        rules::{Channel, Condition, QueueTarget, QueueTargetType},
    },
    conversations::ConversationStatus,
    db::{TenantTable, Tx},
    error::CoreResult,
    ids::{CustomerId, TenantId, UserId},
    with_tx, Services,
};

/// A conversation as the engines see it, read inside the deciding transaction.
#[derive(Debug, Clone)]
pub struct ConversationFacts {
    /// The customer's id.
    pub customer_id: CustomerId,
    /// The customer's external id.
    pub external_id: Option<String>,
    /// The customer's tags, set by agents and integrations.
    pub tags: Vec<String>,
    /// The tags the visitor's page set.
    pub page_tags: Vec<String>,
    /// The customer's language (BCP 47).
    pub language: Option<String>,
    /// The page the visitor is on.
    pub page_url: Option<String>,
    /// The agent it is assigned to.
    pub assigned_user: Option<String>,
    /// The team it is assigned to.
    pub assigned_team: Option<String>,
    /// Its status.
    pub status: ConversationStatus,
    /// Since when the oldest unanswered customer message waits (unix ms).
    pub awaiting_since: Option<i64>,
    /// When an agent first answered since the conversation (re)started.
    pub first_reply_at: Option<i64>,
    /// The routing decision that last routed it, since it (re)started.
    pub routing_id: Option<String>,
}

type FactsRow = (
    Option<String>,
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    String,
    Option<i64>,
    Option<i64>,
    Option<String>,
);

/// A timer of a waiting message fired: locks the conversation in `tx` and
/// reads it, if the message that started the wait at `since` still waits (the
/// conversation is open and has not been answered since). `None` otherwise:
/// the timer has nothing left to do.
pub(crate) async fn still_waiting(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    since: i64,
) -> CoreResult<Option<ConversationFacts>> {
    if crate::conversations::lock_conversation(tx, tenant_id, customer_id)
        .await
        .is_err()
    {
        return Ok(None);
    }
    let facts = conversation_facts(tx, tenant_id, customer_id).await?;
    let waits = facts.awaiting_since == Some(since) && facts.status != ConversationStatus::Done;
    Ok(waits.then_some(facts))
}

/// Reads a conversation in `tx`; `NotFound` when the tenant has no such customer.
pub(crate) async fn conversation_facts(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
) -> CoreResult<ConversationFacts> {
    let row: FactsRow = TenantTable::new("customers", "customer")
        .read_in(
            tx,
            tenant_id,
            customer_id,
            "external_id, tags, page_tags, language, page_url, assigned_user_id, assigned_team_id, status, \
             awaiting_reply_since, first_reply_at, routing_id",
        )
        .await?;
    let (
        external_id,
        tags,
        page_tags,
        language,
        page_url,
        assigned_user,
        assigned_team,
        status,
        awaiting,
        first_reply,
        routing,
    ) = row;
    Ok(ConversationFacts {
        customer_id: customer_id.clone(),
        external_id,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        page_tags: serde_json::from_str(&page_tags).unwrap_or_default(),
        language,
        page_url,
        assigned_user,
        assigned_team,
        status: ConversationStatus::parse(&status).unwrap_or(ConversationStatus::Unread),
        awaiting_since: awaiting,
        first_reply_at: first_reply,
        routing_id: routing,
    })
}

impl ConversationFacts {
    /// The situation the routing rules are tried in.
    pub fn situation<'a>(
        &'a self,
        channel: Channel,
        now: DateTime<Utc>,
        hours: &'a HashMap<String, Schedule>,
    ) -> Situation<'a> {
        Situation {
            channel,
            customer_id: &self.customer_id,
            external_id: self.external_id.as_deref(),
            tags: &self.tags,
            page_tags: &self.page_tags,
            url: self.page_url.as_deref(),
            waiting_seconds: self
                .awaiting_since
                .map(|since| (now.timestamp_millis() - since).max(0) / 1000),
            now,
            hours,
        }
    }
}

impl Services {
    /// The schedules of the opening hours that `conditions` name.
    pub(crate) async fn schedules_for<'c>(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        conditions: impl Iterator<Item = &'c Condition>,
    ) -> CoreResult<HashMap<String, Schedule>> {
        let wanted: HashSet<&str> = conditions
            .filter_map(|c| match c {
                Condition::OpeningHour { opening_hours_id, .. } => Some(opening_hours_id.as_str()),
                _ => None,
            })
            .collect();
        if wanted.is_empty() {
            return Ok(HashMap::new());
        }
        Ok(Services::config_all_in::<OpeningHours>(tx, tenant_id)
            .await?
            .iter()
            .filter_map(|h| {
                let id = h.meta.id.clone()?;
                wanted.contains(id.as_str()).then(|| (id, Schedule::new(h)))
            })
            .collect())
    }
}

/// The agents of `target`, with their load, capacity and presence, read in `tx`.
pub(crate) async fn candidates(tx: &mut Tx, tenant_id: &TenantId, target: &QueueTarget) -> CoreResult<Vec<Candidate>> {
    // One statement: each agent's open conversations and open presence intervals
    // come from the indexes on (tenant, assignee, status) and (tenant, user, end).
    let filter = match target.kind {
        QueueTargetType::User => "and u.id = $2",
        QueueTargetType::Team => "and u.id in (select m.user_id from team_members m where m.team_id = $2)",
        // Tags are a JSON list; they are matched below (without regard to
        // case, as `HAS_TAG`), after a cheap prefilter. A team's tags are its
        // members' too.
        QueueTargetType::Tag => {
            "and (lower(u.tags) like '%' || lower($2) || '%' or u.id in (select m.user_id from team_members m \
             join teams tm on tm.id = m.team_id where tm.tenant_id = $1 and lower(tm.tags) like '%' || lower($2) || '%'))"
        }
    };
    let rows = crate::users::agent_rows(tx, tenant_id, filter, &target.value).await?;
    let has_tag = |tags: &str| {
        serde_json::from_str::<Vec<String>>(tags)
            .unwrap_or_default()
            .iter()
            .any(|t| t.eq_ignore_ascii_case(&target.value))
    };
    // The members of teams that carry the tag.
    let mut in_tagged_team = std::collections::HashSet::new();
    if target.kind == QueueTargetType::Tag {
        let members: Vec<(UserId, String)> = with_tx!(tx, |conn| sqlx::query_as(
            "select m.user_id, tm.tags from team_members m join teams tm on tm.id = m.team_id \
             where tm.tenant_id = $1 and lower(tm.tags) like '%' || lower($2) || '%'"
        )
        .bind(tenant_id)
        .bind(&target.value)
        .fetch_all(conn)
        .await)?;
        in_tagged_team.extend(
            members
                .into_iter()
                .filter(|(_, tags)| has_tag(tags))
                .map(|(user, _)| user),
        );
    }
    Ok(rows
        .into_iter()
        .filter(|(user_id, _, _, tags, _, _)| {
            target.kind != QueueTargetType::Tag || has_tag(tags) || in_tagged_team.contains(user_id)
        })
        .map(|(user_id, capacity, last_assigned_at, _, load, presence)| Candidate {
            user_id,
            load,
            capacity,
            presence: match presence {
                2 => Presence::Online,
                1 => Presence::Away,
                _ => Presence::Offline,
            },
            last_assigned_at,
        })
        .collect())
}

/// Locks `user_id`'s row for the rest of `tx` and counts their open conversations
/// again: two transactions assigning to one agent at once are serialised here, so
/// capacity holds under concurrency.
pub(crate) async fn lock_agent_load(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<i64> {
    with_tx!(tx, |conn| sqlx::query(
        "update users set last_assigned_at = last_assigned_at where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(user_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    let load: i64 = with_tx!(tx, |conn| sqlx::query_scalar(
        "select count(*) from customers where tenant_id = $1 and assigned_user_id = $2 and status <> 'DONE'"
    )
    .bind(tenant_id)
    .bind(user_id)
    .fetch_one(conn)
    .await)?;
    Ok(load)
}
