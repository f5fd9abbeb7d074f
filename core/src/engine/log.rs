//! The match log: every routing decision, what was tried and what came of it.
//! The inbox shows agents why a conversation came to them, and each rule's page its
//! recent matches, from here.

use super::{reason::Reason, routing::Decision};
use crate::{
    db::Tx,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId, UserId},
    model::{RoutingRecord, TriedRule},
    time::{from_ms, now_ms},
    with_db, with_tx, Services,
};

/// A decision to log.
pub(crate) struct Entry<'a> {
    pub id: &'a str,
    pub customer_id: &'a str,
    pub reason: Reason,
    pub decision: &'a Decision,
    pub actions: &'a [String],
    pub result: &'a str,
    pub user_id: Option<&'a str>,
    pub at: i64,
}

fn json<T: serde::Serialize>(value: &T) -> CoreResult<String> {
    serde_json::to_string(value).map_err(|e| CoreError::Internal(e.to_string()))
}

/// Writes a decision in `tx`, and points the conversation at it.
pub(crate) async fn write(tx: &mut Tx, tenant_id: &TenantId, entry: &Entry<'_>) -> CoreResult<()> {
    let tried: Vec<TriedRule> = entry
        .decision
        .tried
        .iter()
        .map(|t| TriedRule {
            path: t.path.clone(),
            name: t.name.clone(),
            matched: t.matched,
        })
        .collect();
    let rule_id = entry.decision.matched.as_ref().map(|p| p.rule_id.clone());
    with_tx!(tx, |conn| sqlx::query(
        "insert into routing_decisions (id, tenant_id, customer_id, at, reason, rule_id, rule_path, tried, actions, \
         result, user_id) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
    )
    .bind(entry.id)
    .bind(tenant_id)
    .bind(entry.customer_id)
    .bind(entry.at)
    .bind(entry.reason.as_str())
    .bind(&rule_id)
    .bind(json(&entry.decision.matched_names)?)
    .bind(json(&tried)?)
    .bind(json(&entry.actions)?)
    .bind(entry.result)
    .bind(entry.user_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    with_tx!(tx, |conn| sqlx::query(
        "update customers set routing_id = $3 where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(entry.customer_id)
    .bind(entry.id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// A conversation queued by decision `id` was assigned to `user_id` from the queue:
/// the decision now reads `ASSIGNED`, with a note of when.
pub(crate) async fn assigned_from_queue(
    tx: &mut Tx,
    tenant_id: &TenantId,
    id: &str,
    user_id: Option<&str>,
) -> CoreResult<()> {
    let actions: Option<String> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select actions from routing_decisions where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(id)
    .fetch_optional(conn)
    .await)?;
    let Some(actions) = actions else {
        return Ok(());
    };
    let mut actions: Vec<String> = serde_json::from_str(&actions).unwrap_or_default();
    actions.push(format!(
        "assigned to {} from the queue at {}",
        user_id.unwrap_or_default(),
        from_ms(now_ms()).to_rfc3339()
    ));
    with_tx!(tx, |conn| sqlx::query(
        "update routing_decisions set result = 'ASSIGNED', user_id = $3, actions = $4 where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(id)
    .bind(user_id)
    .bind(json(&actions)?)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

type Row = (
    String,
    i64,
    CustomerId,
    String,
    Option<String>,
    Option<String>,
    String,
    String,
    String,
    Option<UserId>,
);

const COLUMNS: &str = "id, at, customer_id, reason, rule_id, rule_path, tried, actions, result, user_id";

fn record(row: Row) -> RoutingRecord {
    let (id, at, customer_id, reason, rule_id, names, tried, actions, result, user_id) = row;
    RoutingRecord {
        id,
        at: from_ms(at),
        customer_id,
        reason,
        rule_id,
        rule_names: names.and_then(|n| serde_json::from_str(&n).ok()).unwrap_or_default(),
        tried: serde_json::from_str(&tried).unwrap_or_default(),
        actions: serde_json::from_str(&actions).unwrap_or_default(),
        result,
        user_id,
    }
}

impl Services {
    /// A conversation's routing decisions, newest first (at most `limit`).
    pub async fn routing_log_of_conversation(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        limit: i64,
    ) -> CoreResult<Vec<RoutingRecord>> {
        self.routing_log_where("customer_id", tenant_id, customer_id, limit)
            .await
    }

    /// The decisions in which a routing rule matched, newest first (at most `limit`).
    pub async fn routing_log_of_rule(
        &self,
        tenant_id: &TenantId,
        rule_id: &str,
        limit: i64,
    ) -> CoreResult<Vec<RoutingRecord>> {
        self.routing_log_where("rule_id", tenant_id, rule_id, limit).await
    }

    /// Decisions whose `column` (a fixed column name, never input) is `value`,
    /// newest first (at most `limit`, clamped to 1–200).
    async fn routing_log_where(
        &self,
        column: &'static str,
        tenant_id: &TenantId,
        value: &str,
        limit: i64,
    ) -> CoreResult<Vec<RoutingRecord>> {
        let sql = format!(
            "select {COLUMNS} from routing_decisions where tenant_id = $1 and {column} = $2 \
             order by at desc, id desc limit $3"
        );
        let rows: Vec<Row> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(value)
            .bind(limit.clamp(1, 200))
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(record).collect())
    }

    /// The latest routing decision of each of `customer_ids` (for the inbox).
    pub async fn latest_routing(
        &self,
        tenant_id: &TenantId,
        customer_ids: &[String],
    ) -> CoreResult<Vec<RoutingRecord>> {
        if customer_ids.is_empty() {
            return Ok(Vec::new());
        }
        let placeholders: Vec<String> = (0..customer_ids.len()).map(|i| format!("${}", i + 2)).collect();
        let sql = format!(
            "select {COLUMNS} from routing_decisions where tenant_id = $1 and id in \
             (select routing_id from customers where tenant_id = $1 and id in ({}))",
            placeholders.join(", ")
        );
        let rows: Vec<Row> = with_db!(self.db(), |pool| {
            let mut q = sqlx::query_as(&sql).bind(tenant_id);
            for id in customer_ids {
                q = q.bind(id);
            }
            q.fetch_all(pool).await
        })?;
        Ok(rows.into_iter().map(record).collect())
    }
}
