//! Tenant settings objects: opening hours, system messages, flows, watchdogs,
//! routing rules and SLA rules.
//!
//! Each kind is a typed document ([`ConfigKind`]) validated in Rust and stored whole
//! (`config_objects`), because each is read and written as one piece and its nested
//! parts (conditions, actions, else-rules, holidays) have no life of their own.
//! References between objects are checked on every write, and an object still
//! referenced cannot be deleted.
//!
//! Semantics shared by every kind (spec: "create/override"): a write without `id`
//! creates; with the `id` of an existing object it overrides that object; an unknown
//! `id` is a 404 (so ids never leak across tenants).

pub mod flows;
pub mod opening_hours;
pub mod references;
pub mod rules;
pub mod system_messages;
pub mod watchdogs;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::keyed_page,
    error::{CoreError, CoreResult},
    ids::TenantId,
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

/// Id and timestamps, flattened into every settings object. On input only `id` is
/// read (to override); the timestamps are set by the server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// Id. Give an existing id to override that object; omit it to create one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// When the object was created (set by the server).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When the object was last changed (set by the server).
    #[serde(default, skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A kind of settings object.
pub trait ConfigKind: Serialize + DeserializeOwned + Clone + Send + Sync + 'static {
    /// Storage kind and audit resource type, e.g. `openinghours`.
    const KIND: &'static str;
    /// Name for messages, e.g. `opening hours`.
    const LABEL: &'static str;
    /// The id and timestamps.
    fn meta(&self) -> &Meta;
    /// Mutable id and timestamps.
    fn meta_mut(&mut self) -> &mut Meta;
    /// The name to list and search by.
    fn display_name(&self) -> String;
}

#[derive(sqlx::FromRow)]
struct ConfigRow {
    id: String,
    body: String,
    created_at: i64,
    updated_at: i64,
}

fn decode<K: ConfigKind>(row: ConfigRow) -> CoreResult<K> {
    let mut object: K = serde_json::from_str(&row.body)
        .map_err(|e| CoreError::Internal(format!("stored {} {} is unreadable: {e}", K::KIND, row.id)))?;
    let meta = object.meta_mut();
    meta.id = Some(row.id);
    meta.created_at = Some(from_ms(row.created_at));
    meta.updated_at = Some(from_ms(row.updated_at));
    Ok(object)
}

impl Services {
    /// A page of a tenant's objects of kind `K`, by name.
    pub async fn config_list<K: ConfigKind>(&self, tenant_id: &TenantId, page: &PageRequest) -> CoreResult<Page<K>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<ConfigRow>) = keyed_page(
            self.db(),
            "select count(*) from config_objects where tenant_id = $1 and kind = $2",
            "select id, body, created_at, updated_at from config_objects where tenant_id = $1 and kind = $2 \
             order by name, id limit $3 offset $4",
            tenant_id,
            K::KIND,
            &paging,
        )
        .await?;
        let items = rows.into_iter().map(decode::<K>).collect::<CoreResult<Vec<_>>>()?;
        Ok(paging.page(total, items))
    }

    /// Every object of kind `K` of the tenant (for reference checks).
    pub async fn config_all<K: ConfigKind>(&self, tenant_id: &TenantId) -> CoreResult<Vec<K>> {
        let rows: Vec<ConfigRow> = with_db!(self.db(), |pool| {
            sqlx::query_as(
            "select id, body, created_at, updated_at from config_objects where tenant_id = $1 and kind = $2 order by name, id"
        )
        .bind(tenant_id)
        .bind(K::KIND)
        .fetch_all(pool)
        .await
        })?;
        rows.into_iter().map(decode::<K>).collect()
    }

    /// Every object of kind `K` of the tenant, read inside `tx`: the engines read
    /// settings while they hold a conversation's lock, and on PostgreSQL a read
    /// from the pool then would need a second connection per request.
    pub(crate) async fn config_all_in<K: ConfigKind>(
        tx: &mut crate::db::Tx,
        tenant_id: &TenantId,
    ) -> CoreResult<Vec<K>> {
        let rows: Vec<ConfigRow> = crate::with_tx!(tx, |conn| {
            sqlx::query_as(
            "select id, body, created_at, updated_at from config_objects where tenant_id = $1 and kind = $2 order by name, id"
        )
        .bind(tenant_id)
        .bind(K::KIND)
        .fetch_all(conn)
        .await
        })?;
        rows.into_iter().map(decode::<K>).collect()
    }

    /// One object of kind `K`.
    pub async fn config_get<K: ConfigKind>(&self, tenant_id: &TenantId, id: &str) -> CoreResult<K> {
        let row: Option<ConfigRow> = with_db!(self.db(), |pool| {
            sqlx::query_as(
            "select id, body, created_at, updated_at from config_objects where tenant_id = $1 and kind = $2 and id = $3"
        )
        .bind(tenant_id)
        .bind(K::KIND)
        .bind(id)
        .fetch_optional(pool)
        .await
        })?;
        decode(row.ok_or(CoreError::NotFound(K::LABEL))?)
    }

    /// Whether an object of kind `K` exists.
    pub(crate) async fn config_exists<K: ConfigKind>(&self, tenant_id: &TenantId, id: &str) -> CoreResult<bool> {
        let n: i64 = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select count(*) from config_objects where tenant_id = $1 and kind = $2 and id = $3"
        )
        .bind(tenant_id)
        .bind(K::KIND)
        .bind(id)
        .fetch_one(pool)
        .await)?;
        Ok(n > 0)
    }

    /// Stores a validated object: creates it without `id`, overrides it with the id
    /// of an existing one, 404 for an unknown id. Callers validate first.
    pub(crate) async fn config_write<K: ConfigKind>(
        &self,
        tenant_id: &TenantId,
        mut object: K,
        actor: &Actor,
    ) -> CoreResult<K> {
        let given = object.meta().id.clone();
        if let Some(id) = &given {
            if !self.config_exists::<K>(tenant_id, id).await? {
                return Err(CoreError::NotFound(K::LABEL));
            }
        }
        let id = given.clone().unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
        *object.meta_mut() = Meta::default();
        let body = serde_json::to_string(&object).map_err(|e| CoreError::Internal(e.to_string()))?;
        let name = object.display_name();
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        if given.is_some() {
            with_tx!(&mut tx, |conn| {
                sqlx::query(
                "update config_objects set name = $4, body = $5, updated_at = $6 where tenant_id = $1 and kind = $2 and id = $3"
            )
            .bind(tenant_id)
            .bind(K::KIND)
            .bind(&id)
            .bind(&name)
            .bind(&body)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected())
            })?;
        } else {
            with_tx!(&mut tx, |conn| sqlx::query(
                "insert into config_objects (tenant_id, kind, id, name, body, created_at, updated_at) \
                 values ($1, $2, $3, $4, $5, $6, $6)"
            )
            .bind(tenant_id)
            .bind(K::KIND)
            .bind(&id)
            .bind(&name)
            .bind(&body)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        let verb = if given.is_some() { "update" } else { "create" };
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            &format!("{}.{verb}", K::KIND),
            K::KIND,
            Some(&id),
        )
        .await?;
        tx.commit().await?;
        self.config_get(tenant_id, &id).await
    }

    /// Deletes an object of kind `K`. Callers check references first.
    pub(crate) async fn config_delete<K: ConfigKind>(
        &self,
        tenant_id: &TenantId,
        id: &str,
        actor: &Actor,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let done = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from config_objects where tenant_id = $1 and kind = $2 and id = $3"
        )
        .bind(tenant_id)
        .bind(K::KIND)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(CoreError::NotFound(K::LABEL));
        }
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            &format!("{}.delete", K::KIND),
            K::KIND,
            Some(id),
        )
        .await?;
        tx.commit().await
    }
}

/// A 409 for deleting an object that others still use.
pub(crate) fn in_use(what: &str, users: &[String]) -> CoreError {
    CoreError::Conflict {
        field: None,
        code: "in_use",
        message: format!("this {what} is still used by {}; change those first", users.join(", ")),
    }
}
