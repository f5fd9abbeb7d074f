//! Dashboard users (spec 2.6): create/override, list, get, update, delete.
//!
//! Rules: `email` is required and unique in the tenant; `externalId` is unique in
//! the tenant; `roleId` is `ADMIN`, `SUPERVISOR` or `AGENT`, and `admin` is true
//! exactly for `ADMIN`; `tags` are unique; the password is hashed with argon2id and
//! never returned. A tenant always keeps at least one admin.
//!
//! Our extension `maxConcurrentChats` is the user's capacity: how many open
//! conversations routing gives them at once (1–100); `null` means the tenant's
//! default (`maxChats` of the workspace settings).

mod agents;
mod guards;
mod validation;

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    crypto::{generate_password, hash_password},
    db::{TenantTable, Tx},
    error::{CoreError, CoreResult},
    ids::{TenantId, UserId},
    model::{Page, PageRequest, Role},
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_db, with_tx, Services,
};

pub(crate) use agents::{agent_rows, agents_now, emails_by_id};
use guards::{ensure_another_admin, ensure_another_platform_admin, ensure_within_reach};
use validation::{user_conflict, validate_user, ValidUser};

/// A user as the API shows it (never the password).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    /// Unique id.
    #[schema(value_type = String)]
    pub id: UserId,
    /// E-mail address, unique in the tenant (stored lower-case).
    pub email: String,
    /// The client's own id for this user, unique in the tenant.
    pub external_id: Option<String>,
    /// Name shown to customers and colleagues.
    pub display_name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// `ADMIN`, `SUPERVISOR` or `AGENT`.
    pub role_id: Role,
    /// Skills and labels, unique.
    pub tags: Vec<String>,
    /// Whether the MCO integration is enabled for the user: stored and returned
    /// for clients of that integration, which Rapport itself does not run.
    pub mco_enabled: bool,
    /// True exactly when `roleId` is `ADMIN`.
    pub admin: bool,
    /// Capacity: how many open conversations routing gives the user at once
    /// (1–100); `null` means the tenant's default (`maxChats`). Our extension.
    #[schema(minimum = 1, maximum = 100)]
    pub max_concurrent_chats: Option<i64>,
    /// Whether the user has a password (and so can sign in).
    pub has_password: bool,
    /// When the user was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When the user was last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Input to create, override or update a user (spec 2.6).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"email": "agent@example.com", "displayName": "Sam", "roleId": "AGENT", "password": "a-long-password", "tags": ["de", "billing"], "externalId": "hr-77", "mcoEnabled": false}))]
pub struct UserIn {
    /// Optional id of an existing user to override (create/override); unknown ids are 404.
    pub id: Option<String>,
    /// E-mail address (required), unique in the tenant.
    #[schema(required = true, nullable = false, format = Email, max_length = 254)]
    pub email: Option<String>,
    /// The client's own id, unique in the tenant (at most 200 characters).
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// Name shown in the UI (at most 200 characters).
    #[schema(max_length = 200)]
    pub display_name: Option<String>,
    /// Free text (at most 2000 characters).
    #[schema(max_length = 2000)]
    pub description: Option<String>,
    /// `ADMIN`, `SUPERVISOR` or `AGENT`; default `AGENT` (or `ADMIN` when `admin` is true).
    #[schema(value_type = Option<Role>)]
    pub role_id: Option<String>,
    /// 8 to 256 characters. On update, omitted keeps the current password.
    #[schema(min_length = 8, max_length = 256)]
    pub password: Option<String>,
    /// Unique tags (at most 50, each 1–64 characters).
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
    /// Enables the MCO integration: stored and returned for clients of that
    /// integration, which Rapport itself does not run.
    pub mco_enabled: Option<bool>,
    /// Shorthand for `roleId: ADMIN`; must agree with `roleId` when both are given.
    pub admin: Option<bool>,
    /// Capacity: how many open conversations routing gives the user at once,
    /// 1–100. Omitted or `null`: the tenant's default (`maxChats`). Our extension.
    #[schema(minimum = 1, maximum = 100, example = 3)]
    pub max_concurrent_chats: Option<i64>,
}

impl UserIn {
    /// `admin` must agree with `roleId` when both are given, as JSON Schema conditions.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([
            {"if": {"required": ["roleId", "admin"], "properties": {"roleId": {"const": "ADMIN"}}},
             "then": {"properties": {"admin": {"const": true}}}},
            {"if": {"required": ["roleId", "admin"], "properties": {"roleId": {"enum": ["SUPERVISOR", "AGENT"]}}},
             "then": {"properties": {"admin": {"const": false}}}},
        ])
    }
}

/// Input to create a user from code (bootstrap, CLI, new tenants).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NewUser {
    /// Tenant the user belongs to.
    pub tenant_id: TenantId,
    /// E-mail address, unique in the tenant.
    pub email: String,
    /// Password; a random one is generated (and returned) when `None`.
    pub password: Option<String>,
    /// Role in the tenant.
    pub role: Role,
    /// Name shown in the UI.
    pub display_name: Option<String>,
    /// Whether the user also manages the installation's tenants.
    pub platform_admin: bool,
}

/// A created user, with the generated password when one was generated.
#[derive(Debug, Clone)]
pub struct CreatedUser {
    /// The new user's id.
    pub id: UserId,
    /// The stored (lower-cased) e-mail.
    pub email: String,
    /// The generated password, shown once; `None` if the caller chose one.
    pub generated_password: Option<String>,
}

#[derive(sqlx::FromRow)]
struct UserRow {
    id: UserId,
    email: String,
    external_id: Option<String>,
    display_name: Option<String>,
    description: Option<String>,
    role_id: String,
    tags: String,
    mco_enabled: bool,
    max_chats: Option<i64>,
    has_password: bool,
    created_at: i64,
    updated_at: i64,
}

impl UserRow {
    fn into_user(self) -> User {
        let role = Role::parse(&self.role_id).unwrap_or(Role::Agent);
        User {
            id: self.id,
            email: self.email,
            external_id: self.external_id,
            display_name: self.display_name,
            description: self.description,
            role_id: role,
            tags: serde_json::from_str(&self.tags).unwrap_or_default(),
            mco_enabled: self.mco_enabled,
            admin: role == Role::Admin,
            max_concurrent_chats: self.max_chats,
            has_password: self.has_password,
            created_at: from_ms(self.created_at),
            updated_at: from_ms(self.updated_at),
        }
    }
}

const USER_COLUMNS: &str = "id, email, external_id, display_name, description, role_id, tags, mco_enabled, \
     max_chats, password_hash is not null as has_password, created_at, updated_at";

/// The users table, as [`UserRow`] reads it.
const USERS: TenantTable = TenantTable {
    table: "users",
    columns: USER_COLUMNS,
    what: "user",
    narrow: "",
};

impl Services {
    /// Creates a user from code (bootstrap, CLI, a new tenant's first admin).
    pub async fn create_user(&self, input: NewUser, actor: &Actor) -> CoreResult<CreatedUser> {
        let generated = input.password.is_none().then(generate_password);
        let user_in = UserIn {
            email: Some(input.email.clone()),
            display_name: input.display_name.clone(),
            role_id: Some(input.role.as_str().to_string()),
            password: input.password.clone().or_else(|| generated.clone()),
            ..Default::default()
        };
        let valid = validate_user(&user_in)?;
        self.get_tenant(&input.tenant_id).await.map_err(|e| match e {
            CoreError::NotFound(_) => CoreError::invalid("tenantId", "unknown_reference", "tenant does not exist"),
            other => other,
        })?;
        let id = UserId::new(uuid::Uuid::now_v7().to_string());
        let mut tx = self.db().begin().await?;
        insert_user(&mut tx, &input.tenant_id, &id, &valid, input.platform_admin).await?;
        audit::record(&mut tx, Some(&input.tenant_id), actor, "user.create", "user", Some(&id)).await?;
        tx.commit().await?;
        Ok(CreatedUser {
            id,
            email: valid.email,
            generated_password: generated,
        })
    }

    /// Creates a user, or, when `id` is given, overrides that user (spec:
    /// create/override). An `id` that does not exist in the tenant is a 404.
    pub async fn save_user(&self, tenant_id: &TenantId, input: UserIn, actor: &Actor) -> CoreResult<User> {
        if let Some(id) = input.id.clone() {
            return self.update_user(tenant_id, &UserId::from(id), input, actor).await;
        }
        let valid = validate_user(&input)?;
        let id = UserId::new(uuid::Uuid::now_v7().to_string());
        let mut tx = self.db().begin().await?;
        insert_user(&mut tx, tenant_id, &id, &valid, false).await?;
        audit::record(&mut tx, Some(tenant_id), actor, "user.create", "user", Some(&id)).await?;
        tx.commit().await?;
        self.get_user(tenant_id, &id).await
    }

    /// Replaces a user's fields; an omitted password keeps the current one.
    pub async fn update_user(
        &self,
        tenant_id: &TenantId,
        id: &UserId,
        input: UserIn,
        actor: &Actor,
    ) -> CoreResult<User> {
        let current = self.get_user(tenant_id, id).await?;
        ensure_within_reach(self.db(), tenant_id, id, actor).await?;
        let valid = validate_user(&input)?;
        let mut tx = self.db().begin().await?;
        if current.role_id == Role::Admin && valid.role != Role::Admin {
            ensure_another_admin(&mut tx, tenant_id, id).await?;
        }
        let hash = match &valid.password {
            Some(p) => Some(hash_password(p).await?),
            None => None,
        };
        with_tx!(&mut tx, |conn| sqlx::query(
            "update users set email = $3, external_id = $4, display_name = $5, description = $6, role_id = $7, \
             tags = $8, mco_enabled = $9, password_hash = coalesce($10, password_hash), updated_at = $11, \
             max_chats = $12 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(&valid.email)
        .bind(&valid.external_id)
        .bind(&valid.display_name)
        .bind(&valid.description)
        .bind(valid.role.as_str())
        .bind(serde_json::to_string(&valid.tags).unwrap_or_default())
        .bind(valid.mco_enabled)
        .bind(&hash)
        .bind(now_ms())
        .bind(valid.max_chats)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(user_conflict)?;
        if hash.is_some() {
            // A new password ends the user's sessions.
            with_tx!(&mut tx, |conn| sqlx::query("delete from sessions where user_id = $1")
                .bind(id)
                .execute(conn)
                .await
                .map(|r| r.rows_affected()))?;
        }
        audit::record(&mut tx, Some(tenant_id), actor, "user.update", "user", Some(id)).await?;
        tx.commit().await?;
        self.keys_changed();
        self.get_user(tenant_id, id).await
    }

    /// One user of the tenant.
    pub async fn get_user(&self, tenant_id: &TenantId, id: &UserId) -> CoreResult<User> {
        USERS.get(self.db(), tenant_id, id).await.map(UserRow::into_user)
    }

    /// The shown names (display name, else e-mail) of those of `ids` that are
    /// users of the tenant, by id: one query however many messages a thread
    /// shows, instead of loading every user.
    pub async fn user_names(
        &self,
        tenant_id: &TenantId,
        ids: &[&str],
    ) -> CoreResult<std::collections::HashMap<String, String>> {
        if ids.is_empty() {
            return Ok(Default::default());
        }
        let sql = format!(
            "select id, coalesce(nullif(display_name, ''), email) from users where tenant_id = $1 and id in ({})",
            crate::db::placeholders(2, ids.len())
        );
        let rows: Vec<(String, String)> = with_db!(self.db(), |pool| {
            let mut q = sqlx::query_as(&sql).bind(tenant_id);
            for id in ids {
                q = q.bind(*id);
            }
            q.fetch_all(pool).await
        })?;
        Ok(rows.into_iter().collect())
    }

    /// A user of the tenant by id or e-mail (for references that accept either).
    pub async fn find_user(&self, tenant_id: &TenantId, id_or_email: &str) -> CoreResult<User> {
        let sql = format!("select {USER_COLUMNS} from users where tenant_id = $1 and (id = $2 or email = $3)");
        let row: Option<UserRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id_or_email)
            .bind(id_or_email.trim().to_lowercase())
            .fetch_optional(pool)
            .await)?;
        row.map(UserRow::into_user).ok_or(CoreError::NotFound("user"))
    }

    /// A page of the tenant's users, by e-mail; `search` matches e-mail or display name.
    pub async fn list_users(
        &self,
        tenant_id: &TenantId,
        search: Option<&str>,
        page: &PageRequest,
    ) -> CoreResult<Page<User>> {
        let paging = Paging::from_request(page)?;
        let pattern = search.map(|s| format!("%{}%", s.trim().to_lowercase()));
        let condition = "tenant_id = $1 and ($2 is null or email like $2 or lower(display_name) like $2)";
        let count_sql = format!("select count(*) from users where {condition}");
        let sql = format!("select {USER_COLUMNS} from users where {condition} order by email, id limit $3 offset $4");
        let (total, rows): (i64, Vec<UserRow>) = crate::db::page(
            self.db(),
            &count_sql,
            &sql,
            &[tenant_id.into(), pattern.into()],
            &paging,
        )
        .await?;
        Ok(paging.page(total, rows.into_iter().map(UserRow::into_user).collect()))
    }

    /// Deletes a user: their sessions end, they leave their teams, and customers
    /// assigned to them become unassigned. The tenant's last admin cannot be deleted.
    pub async fn delete_user(&self, tenant_id: &TenantId, id: &UserId, actor: &Actor) -> CoreResult<()> {
        let user = self.get_user(tenant_id, id).await?;
        let platform_admin = ensure_within_reach(self.db(), tenant_id, id, actor).await?;
        let mut tx = self.db().begin().await?;
        if user.role_id == Role::Admin {
            ensure_another_admin(&mut tx, tenant_id, id).await?;
        }
        if platform_admin {
            ensure_another_platform_admin(&mut tx, id).await?;
        }
        crate::teams::remove_member_everywhere(&mut tx, tenant_id, id).await?;
        crate::customers::unassign_user_everywhere(&mut tx, tenant_id, id).await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from users where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(&mut tx, Some(tenant_id), actor, "user.delete", "user", Some(id)).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(())
    }

    /// Sets a user's password (tenant-scoped) and ends their sessions.
    pub async fn set_password(
        &self,
        tenant_id: &TenantId,
        user_id: &UserId,
        password: &str,
        actor: &Actor,
    ) -> CoreResult<()> {
        ensure_within_reach(self.db(), tenant_id, user_id, actor).await?;
        let mut checks = Checks::new();
        checks.password("password", password);
        checks.finish()?;
        let hash = hash_password(password).await?;
        let mut tx = self.db().begin().await?;
        let done = with_tx!(&mut tx, |conn| sqlx::query(
            "update users set password_hash = $3, updated_at = $4 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(user_id)
        .bind(&hash)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(CoreError::NotFound("user"));
        }
        with_tx!(&mut tx, |conn| sqlx::query("delete from sessions where user_id = $1")
            .bind(user_id)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        audit::record(&mut tx, Some(tenant_id), actor, "user.password", "user", Some(user_id)).await?;
        tx.commit().await
    }
}

async fn insert_user(
    tx: &mut Tx,
    tenant_id: &TenantId,
    id: &str,
    valid: &ValidUser,
    platform_admin: bool,
) -> CoreResult<()> {
    let hash = match &valid.password {
        Some(p) => Some(hash_password(p).await?),
        None => None,
    };
    let now = now_ms();
    with_tx!(tx, |conn| sqlx::query(
        "insert into users (id, tenant_id, email, password_hash, role_id, display_name, description, external_id, \
         tags, mco_enabled, platform_admin, created_at, updated_at, max_chats) \
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12, $13)"
    )
    .bind(id)
    .bind(tenant_id)
    .bind(&valid.email)
    .bind(&hash)
    .bind(valid.role.as_str())
    .bind(&valid.display_name)
    .bind(&valid.description)
    .bind(&valid.external_id)
    .bind(serde_json::to_string(&valid.tags).unwrap_or_default())
    .bind(valid.mco_enabled)
    .bind(platform_admin)
    .bind(now)
    .bind(valid.max_chats)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))
    .map_err(user_conflict)?;
    Ok(())
}
