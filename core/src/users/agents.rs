//! Users as routing and reports read them: agents with their load and
//! presence, and e-mail addresses by id.

use crate::{
    error::CoreResult,
    ids::{TenantId, UserId},
    with_db, with_tx,
};

/// An agent as routing weighs them: id, capacity, last assignment, tags, open
/// conversations and presence (2 online, 1 away, 0 offline).
pub(crate) type AgentRow = (UserId, i64, Option<i64>, String, i64, i64);

/// Each agent of the tenant that `filter` (SQL over `u`, with `$2` bound to
/// `value` where it names `$2`) keeps: id, capacity, last assignment, tags, open conversations and
/// presence (2 online, 1 away, 0 offline).
pub(crate) async fn agent_rows(
    tx: &mut crate::db::Tx,
    tenant_id: &TenantId,
    filter: &str,
    value: &str,
) -> CoreResult<Vec<AgentRow>> {
    let sql = format!(
        "select u.id, coalesce(u.max_chats, t.max_chats), u.last_assigned_at, u.tags, \
           (select count(*) from customers c where c.tenant_id = u.tenant_id and c.assigned_user_id = u.id \
              and c.status <> 'DONE'), \
           (select cast(coalesce(max(case p.state when 'ONLINE' then 2 when 'AWAY' then 1 else 0 end), 0) as bigint) \
              from presence_intervals p where p.tenant_id = u.tenant_id and p.user_id = u.id and p.ended_at is null) \
         from users u join tenants t on t.id = u.tenant_id where u.tenant_id = $1 {filter}"
    );
    let names_value = filter.contains("$2");
    Ok(with_tx!(tx, |conn| {
        let query = sqlx::query_as(&sql).bind(tenant_id);
        let query = if names_value { query.bind(value) } else { query };
        query.fetch_all(conn).await
    })?)
}

/// Every user's e-mail address by user id: reports keyed by agent e-mail.
pub(crate) async fn emails_by_id(
    db: &crate::db::Db,
    tenant_id: &TenantId,
) -> CoreResult<std::collections::HashMap<String, String>> {
    let rows: Vec<(String, String)> = with_db!(db, |pool| {
        sqlx::query_as("select id, email from users where tenant_id = $1")
            .bind(tenant_id)
            .fetch_all(pool)
            .await
    })?;
    Ok(rows.into_iter().collect())
}

/// Whether any agent of the tenant is online, and whether any online agent has
/// room for another conversation: the action rules' agent conditions.
pub(crate) async fn agents_now(
    tx: &mut crate::db::Tx,
    tenant_id: &TenantId,
) -> CoreResult<crate::config::rules::action::AgentsNow> {
    let rows = agent_rows(tx, tenant_id, "", "").await?;
    let online = || rows.iter().filter(|r| r.5 == 2);
    Ok(crate::config::rules::action::AgentsNow {
        online: online().next().is_some(),
        available: online().any(|r| r.4 < r.1),
    })
}
