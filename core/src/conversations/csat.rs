//! Customer satisfaction (CSAT): once a conversation is set to `DONE`, its
//! visitor's widget asks how it went, a rating from 1 to 5 and an optional
//! comment, and takes one answer per closing. The rating belongs to that
//! closing (the customer's `status_changed_at` when it became `DONE`): the
//! Conversation object shows it while the conversation stays closed, and a
//! reopened conversation is a new one, asked again when it closes.
//!
//! The workspace can switch the question off (`csatEnabled`). What a rating
//! makes happen (the report fact, the `csat.submitted` event, the inbox's live
//! update) is the use case's, `usecases/csat.rs`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::{lock_conversation, ConversationStatus};
use crate::{
    db::{unique_violation, Tx},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId, UserId},
    time::{from_ms, now_ms},
    validate::Checks,
    with_db, with_tx, Services,
};

/// The longest comment a rating carries, in characters.
pub const MAX_CSAT_COMMENT: usize = 1000;

/// A visitor's rating of a closed conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"rating": 5, "comment": "Quick and friendly, thank you!", "userId": "0190c3d2-8c1e-7b7a-9f1e-3f2a1b0c9d8e", "closedAt": "2026-11-28T10:15:00Z", "createdAt": "2026-11-28T10:16:12Z"}))]
pub struct Csat {
    /// 1 (very dissatisfied) to 5 (very satisfied).
    #[schema(minimum = 1, maximum = 5)]
    pub rating: i64,
    /// What the visitor added, if anything.
    pub comment: Option<String>,
    /// The agent the conversation was assigned to when it was closed.
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
    /// When the conversation was set to `DONE`: the closing this rating answers.
    pub closed_at: DateTime<Utc>,
    /// When the visitor rated it.
    pub created_at: DateTime<Utc>,
}

/// A rating, as the visitor sends it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"rating": 4, "comment": "Solved, but I waited a while."}))]
pub struct CsatIn {
    /// Required: 1 (very dissatisfied) to 5 (very satisfied).
    #[schema(required = true, nullable = false, minimum = 1, maximum = 5)]
    pub rating: Option<i64>,
    /// Optional, at most 1,000 characters; blank is none.
    #[schema(max_length = 1000)]
    pub comment: Option<String>,
}

/// Whether the widget should ask its visitor for a rating now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CsatPrompt {
    /// True when the conversation is `DONE`, the workspace asks for ratings and
    /// this closing has none yet.
    pub ask: bool,
    /// When the conversation was closed, while it is `DONE`: the closing a
    /// rating answers, so that a page can tell a new closing from one it has
    /// asked about already.
    pub closed_at: Option<DateTime<Utc>>,
}

/// A stored rating's columns, in [`CSAT_COLUMNS`] order.
type CsatRow = (i64, Option<String>, Option<UserId>, i64, i64);

/// A rating from its columns (`rating, comment, user_id, closed_at,
/// created_at`).
pub(crate) fn csat_of((rating, comment, user_id, closed_at, created_at): CsatRow) -> Csat {
    Csat {
        rating,
        comment,
        user_id,
        closed_at: from_ms(closed_at),
        created_at: from_ms(created_at),
    }
}

/// What a closed conversation's rating is measured against.
struct Closing {
    enabled: bool,
    status: ConversationStatus,
    closed_at: Option<i64>,
    assignee: Option<UserId>,
}

/// Locks the customer's conversation and reads its closing.
async fn lock_closing(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<Closing> {
    let status = lock_conversation(tx, tenant_id, customer_id).await?;
    let (enabled, closed_at, assignee): (bool, Option<i64>, Option<UserId>) = with_tx!(tx, |conn| sqlx::query_as(
        "select t.csat_enabled, c.status_changed_at, c.assigned_user_id from customers c \
         join tenants t on t.id = c.tenant_id where c.tenant_id = $1 and c.id = $2"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .fetch_one(conn)
    .await)?;
    Ok(Closing {
        enabled,
        status,
        closed_at,
        assignee,
    })
}

/// Stores the visitor's rating of the conversation's current closing, in `tx`.
/// Refused with 409 while the conversation is open (`conversation_open`), when
/// the workspace does not ask (`csat_disabled`) and when this closing was
/// rated already (`already_rated`): one answer per closing, so a script cannot
/// stuff the report.
pub(crate) async fn rate_in(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    input: &CsatIn,
) -> CoreResult<Csat> {
    let mut checks = Checks::new();
    match input.rating {
        None => checks.push("rating", "required", "rating is required"),
        Some(rating) => checks.in_range("rating", rating, 1..=5),
    }
    let comment = checks.optional_text("comment", input.comment.as_deref(), MAX_CSAT_COMMENT);
    checks.finish()?;
    let closing = lock_closing(tx, tenant_id, customer_id).await?;
    let conflict = |code: &'static str, message: &str| CoreError::Conflict {
        field: None,
        code,
        message: message.into(),
    };
    if !closing.enabled {
        return Err(conflict("csat_disabled", "this workspace does not ask for ratings"));
    }
    let (ConversationStatus::Done, Some(closed_at)) = (closing.status, closing.closed_at) else {
        return Err(conflict(
            "conversation_open",
            "a conversation is rated once it is closed (DONE)",
        ));
    };
    let csat = Csat {
        rating: input.rating.unwrap_or_default(),
        comment,
        user_id: closing.assignee,
        closed_at: from_ms(closed_at),
        created_at: from_ms(now_ms()),
    };
    let inserted = with_tx!(tx, |conn| sqlx::query(
        "insert into csat_ratings (id, tenant_id, customer_id, closed_at, user_id, rating, comment, created_at) \
         values ($1, $2, $3, $4, $5, $6, $7, $8)"
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(tenant_id)
    .bind(customer_id)
    .bind(closed_at)
    .bind(&csat.user_id)
    .bind(csat.rating)
    .bind(&csat.comment)
    .bind(csat.created_at.timestamp_millis())
    .execute(conn)
    .await
    .map(|r| r.rows_affected()));
    match inserted {
        Ok(_) => Ok(csat),
        Err(err)
            if unique_violation(
                &err,
                "csat_ratings_closing_key",
                "csat_ratings.tenant_id, csat_ratings.customer_id, csat_ratings.closed_at",
            ) =>
        {
            Err(conflict("already_rated", "this conversation was rated already"))
        }
        Err(err) => Err(err.into()),
    }
}

impl Services {
    /// Whether the customer's widget should ask for a rating now (see
    /// [`CsatPrompt::ask`]).
    pub async fn csat_prompt(&self, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<CsatPrompt> {
        let row: Option<(bool, String, Option<i64>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select t.csat_enabled and not exists (select 1 from csat_ratings r where r.tenant_id = c.tenant_id \
             and r.customer_id = c.id and r.closed_at = c.status_changed_at), c.status, c.status_changed_at \
             from customers c join tenants t on t.id = c.tenant_id where c.tenant_id = $1 and c.id = $2"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .fetch_optional(pool)
        .await)?;
        let (unanswered, status, closed_at) = row.ok_or(CoreError::NotFound("customer"))?;
        let closed_at = closed_at.filter(|_| status == ConversationStatus::Done.as_str());
        Ok(CsatPrompt {
            ask: unanswered && closed_at.is_some(),
            closed_at: closed_at.map(from_ms),
        })
    }
}
