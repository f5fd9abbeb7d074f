//! The audit log: who changed what, when, from where. Every write service records
//! one entry inside its own transaction, so the log and the data never disagree.
//!
//! The log knows no engine. What the engines do with an audited action (the
//! `SETTING_CHANGED` watchdogs) they register once per process with
//! [`observe`], and [`record`] runs it in the same transaction: the arrow
//! points from the engines to the log, so the domain modules that audit their
//! writes never reach the engines through it.

use std::{future::Future, pin::Pin, sync::OnceLock};

use serde::{Deserialize, Serialize};

pub use crate::actor::{Actor, ActorKind};
use crate::{
    db::Tx,
    error::CoreResult,
    ids::TenantId,
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::Paging,
    with_tx, Services,
};

/// One audit entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditEntry {
    /// Entry id.
    pub id: String,
    /// When it happened.
    pub at: chrono::DateTime<chrono::Utc>,
    /// Kind of actor.
    pub actor_type: ActorKind,
    /// The user's or key's id.
    pub actor_id: String,
    /// What was done, `<resource>.<verb>`, e.g. `user.create`.
    pub action: String,
    /// Kind of object changed, e.g. `user`.
    pub resource_type: String,
    /// Id of the object changed.
    pub resource_id: Option<String>,
    /// Client IP address.
    pub ip: Option<String>,
    /// Request id, to find the request in the server's logs.
    pub request_id: Option<String>,
}

/// Filters of the audit log listing. Times are RFC 3339.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct AuditFilter {
    /// Only entries at or after this time.
    pub from: Option<chrono::DateTime<chrono::Utc>>,
    /// Only entries before this time.
    pub to: Option<chrono::DateTime<chrono::Utc>>,
    /// Only entries of this actor (user or key id).
    pub actor: Option<String>,
    /// Only this action (e.g. `user.create`), or every action of a resource with a
    /// trailing `.*` (e.g. `user.*`).
    pub action: Option<String>,
}

/// An audited action, as an [`Observer`] hears it.
#[derive(Debug, Clone, Copy)]
pub struct Audited<'a> {
    /// The tenant whose data changed.
    pub tenant_id: &'a TenantId,
    /// Who did it.
    pub actor: &'a Actor,
    /// What was done, `<resource>.<verb>`.
    pub action: &'a str,
    /// Kind of object changed.
    pub resource_type: &'a str,
    /// Id of the object changed.
    pub resource_id: Option<&'a str>,
}

/// What an engine does with each audited action of a tenant, inside the
/// action's transaction.
pub type Observer = for<'a> fn(&'a mut Tx, Audited<'a>) -> Pin<Box<dyn Future<Output = CoreResult<()>> + Send + 'a>>;

/// The engines' observer; a plain function, so one per process serves every
/// [`Services`] in it.
static OBSERVER: OnceLock<Observer> = OnceLock::new();

/// Registers what the engines do with audited actions. [`Services::new`] calls
/// it with the watchdogs' observer; later calls change nothing.
pub fn observe(observer: Observer) {
    let _ = OBSERVER.set(observer);
}

/// Records an entry inside `tx`, then, for a tenant's action, runs the
/// engines' [`Observer`] in the same transaction (a settings write fires the
/// tenant's `SETTING_CHANGED` watchdogs).
pub async fn record(
    tx: &mut Tx,
    tenant_id: Option<&TenantId>,
    actor: &Actor,
    action: &str,
    resource_type: &str,
    resource_id: Option<&str>,
) -> CoreResult<()> {
    with_tx!(tx, |conn| {
        sqlx::query(
        "insert into audit_log (id, tenant_id, at, actor_type, actor_id, action, resource_type, resource_id, ip, request_id) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(tenant_id)
    .bind(now_ms())
    .bind(actor.kind.as_str())
    .bind(&actor.id)
    .bind(action)
    .bind(resource_type)
    .bind(resource_id)
    .bind(&actor.ip)
    .bind(&actor.request_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected())
    })?;
    if let (Some(tenant_id), Some(observe)) = (tenant_id, OBSERVER.get()) {
        let audited = Audited {
            tenant_id,
            actor,
            action,
            resource_type,
            resource_id,
        };
        observe(tx, audited).await?;
    }
    Ok(())
}

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: String,
    at: i64,
    actor_type: String,
    actor_id: String,
    action: String,
    resource_type: String,
    resource_id: Option<String>,
    ip: Option<String>,
    request_id: Option<String>,
}

impl Services {
    /// Records a write that has no transaction of its own (e.g. a sign-in).
    pub async fn audit(
        &self,
        tenant_id: Option<&TenantId>,
        actor: &Actor,
        action: &str,
        resource_type: &str,
        resource_id: Option<&str>,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        record(&mut tx, tenant_id, actor, action, resource_type, resource_id).await?;
        tx.commit().await
    }

    /// A page of a tenant's audit log, newest first.
    pub async fn list_audit(
        &self,
        tenant_id: &TenantId,
        filter: &AuditFilter,
        page: &PageRequest,
    ) -> CoreResult<Page<AuditEntry>> {
        let paging = Paging::from_request(page)?;
        let from = filter.from.map(|t| t.timestamp_millis());
        let to = filter.to.map(|t| t.timestamp_millis());
        let (action_exact, action_prefix) = match filter.action.as_deref() {
            Some(a) if a.ends_with(".*") => (None, Some(format!("{}.%", a.trim_end_matches(".*")))),
            Some(a) => (Some(a.to_string()), None),
            None => (None, None),
        };
        let condition = "tenant_id = $1 and ($2 is null or at >= $2) and ($3 is null or at < $3) \
             and ($4 is null or actor_id = $4) and ($5 is null or action = $5) \
             and ($6 is null or action like $6)";
        let count_sql = format!("select count(*) from audit_log where {condition}");
        let list_sql = format!(
            "select id, at, actor_type, actor_id, action, resource_type, resource_id, ip, request_id \
             from audit_log where {condition} order by at desc, id desc limit $7 offset $8"
        );
        let args = [
            tenant_id.into(),
            from.into(),
            to.into(),
            filter.actor.clone().into(),
            action_exact.into(),
            action_prefix.into(),
        ];
        let (total, rows): (i64, Vec<AuditRow>) =
            crate::db::page(self.db(), &count_sql, &list_sql, &args, &paging).await?;
        Ok(paging.page(
            total,
            rows.into_iter()
                .map(|r| AuditEntry {
                    id: r.id,
                    at: from_ms(r.at),
                    actor_type: ActorKind::parse(&r.actor_type),
                    actor_id: r.actor_id,
                    action: r.action,
                    resource_type: r.resource_type,
                    resource_id: r.resource_id,
                    ip: r.ip,
                    request_id: r.request_id,
                })
                .collect(),
        ))
    }
}
