//! Authentication: dashboard sessions and API keys.
//!
//! - A **session** is a random cookie value; only its SHA-256 is stored. Login
//!   always creates a fresh one (rotation), logout deletes it.
//! - A **tenant API key** (`rpt_…`) reaches one tenant's data over REST.
//! - A **platform key** (`rpp_…`) belongs to a platform admin and reaches only tenant
//!   management. It sees every tenant: platform admins operate the whole
//!   installation, so scoping their keys to "tenants they created" would only hide
//!   tenants made by the CLI or by a colleague.
//!
//! Tokens are shown once and stored only as digests.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor, ActorKind},
    crypto::{random_token, token_digest, verify_password},
    db::TenantTable,
    error::{CoreError, CoreResult},
    ids::{TenantId, UserId},
    model::{ApiKey, ApiKeyKind, CreatedApiKey, Page, PageRequest, Role, SessionUser},
    sign_ins::{SignInDevice, SESSION_MAX_MS},
    time::{from_ms, now_ms},
    validate::{Checks, Paging},
    with_db, with_tx, Services,
};

/// How long a dashboard session lives without activity.
pub const SESSION_IDLE_MS: i64 = 7 * 24 * 3600 * 1000;
/// Session and key "last seen" stamps are written at most this often.
const TOUCH_INTERVAL_MS: i64 = 60 * 1000;

/// Prefix of tenant API keys.
pub const TENANT_KEY_PREFIX: &str = "rpt_";
/// Prefix of platform keys.
pub const PLATFORM_KEY_PREFIX: &str = "rpp_";

/// Who a REST request acts for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Principal {
    /// A tenant API key: reaches this tenant's data only.
    Tenant {
        /// The tenant.
        tenant_id: TenantId,
        /// The key used.
        key_id: String,
    },
    /// A platform key: tenant management only.
    Platform {
        /// The platform admin who owns the key.
        user_id: UserId,
        /// The key used.
        key_id: String,
    },
}

impl Principal {
    /// Short identifier of the actor, for logs and the audit trail.
    pub fn actor(&self) -> String {
        match self {
            Principal::Tenant { key_id, .. } => format!("apikey:{key_id}"),
            Principal::Platform { key_id, .. } => format!("platformkey:{key_id}"),
        }
    }
}

/// Login input.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoginInput {
    /// Tenant slug; needed only when the e-mail exists in several tenants.
    pub workspace: Option<String>,
    /// E-mail address.
    pub email: String,
    /// Password.
    pub password: String,
}

/// A successful login: the user and the new session's cookie value.
#[derive(Debug, Clone)]
pub struct LoginOutcome {
    /// The signed-in user.
    pub user: SessionUser,
    /// The session token to set as cookie. Never log it.
    pub session_token: String,
}

#[derive(sqlx::FromRow)]
struct LoginRow {
    id: UserId,
    password_hash: Option<String>,
}

#[derive(sqlx::FromRow)]
struct SessionUserRow {
    id: UserId,
    email: String,
    display_name: Option<String>,
    role_id: String,
    platform_admin: bool,
    tenant_id: TenantId,
    tenant_name: String,
}

impl SessionUserRow {
    fn into_user(self) -> CoreResult<SessionUser> {
        let role = Role::parse(&self.role_id)
            .ok_or_else(|| CoreError::Internal(format!("user {} has unknown role {}", self.id, self.role_id)))?;
        Ok(SessionUser {
            id: self.id,
            email: self.email,
            display_name: self.display_name,
            role,
            platform_admin: self.platform_admin,
            tenant_id: self.tenant_id,
            tenant_name: self.tenant_name,
        })
    }
}

#[derive(sqlx::FromRow)]
struct ApiKeyRow {
    id: String,
    kind: String,
    name: String,
    prefix: String,
    created_at: i64,
    last_used_at: Option<i64>,
    revoked_at: Option<i64>,
}

impl From<ApiKeyRow> for ApiKey {
    fn from(r: ApiKeyRow) -> Self {
        ApiKey {
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            kind: if r.kind == "platform" {
                ApiKeyKind::Platform
            } else {
                ApiKeyKind::Tenant
            },
            created_at: from_ms(r.created_at),
            last_used_at: r.last_used_at.map(from_ms),
            revoked_at: r.revoked_at.map(from_ms),
        }
    }
}

const KEY_COLUMNS: &str = "id, kind, name, prefix, created_at, last_used_at, revoked_at";

/// A tenant's own API keys (not the platform's, which share the table).
const TENANT_KEYS: TenantTable = TenantTable {
    table: "api_keys",
    columns: KEY_COLUMNS,
    what: "API key",
    narrow: " and kind = 'tenant'",
};

/// A well-formed argon2id hash of a random password, verified against when the
/// e-mail is unknown so that a failed login takes the same time either way.
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$N0yRjHhAFKrT9dq0nCw4JJ2YwY9EHe8yJ5PWJ8ULLBw";

impl Services {
    /// Checks e-mail and password and opens a new session, of an unknown device.
    pub async fn login(&self, input: &LoginInput) -> CoreResult<LoginOutcome> {
        self.login_on(input, &SignInDevice::default()).await
    }

    /// Checks e-mail and password and opens a new session on `device` (kept
    /// with the session, for its owner's list of sessions).
    pub async fn login_on(&self, input: &LoginInput, device: &SignInDevice) -> CoreResult<LoginOutcome> {
        let email = input.email.trim().to_lowercase();
        let workspace = input.workspace.as_deref().map(str::trim).filter(|w| !w.is_empty());
        let rows: Vec<LoginRow> = with_db!(self.db(), |pool| sqlx::query_as(
            "select u.id, u.password_hash from users u join tenants t on t.id = u.tenant_id \
             where u.email = $1 and ($2 is null or t.slug = $2) limit 2"
        )
        .bind(&email)
        .bind(workspace)
        .fetch_all(pool)
        .await)?;
        let row = match rows.as_slice() {
            [one] => one,
            [] => {
                verify_password(&input.password, DUMMY_HASH).await;
                return Err(CoreError::Unauthenticated);
            }
            _ => {
                return Err(CoreError::invalid(
                    "workspace",
                    "workspace_required",
                    "this e-mail belongs to several workspaces; enter the workspace to sign in to",
                ))
            }
        };
        let Some(hash) = row.password_hash.as_deref() else {
            verify_password(&input.password, DUMMY_HASH).await;
            return Err(CoreError::Unauthenticated);
        };
        if !verify_password(&input.password, hash).await {
            return Err(CoreError::Unauthenticated);
        }
        let token = self.open_session(&row.id, device).await?;
        let user = self
            .user_for_session_digest(&token_digest(&token))
            .await?
            .ok_or(CoreError::Unauthenticated)?;
        self.presence_signed_in(&user.tenant_id, &user.id).await?;
        Ok(LoginOutcome {
            user,
            session_token: token,
        })
    }

    /// Starts a new dashboard session for a user; returns the cookie value.
    pub(crate) async fn open_session(&self, user_id: &UserId, device: &SignInDevice) -> CoreResult<String> {
        let token = random_token(32);
        let now = now_ms();
        with_db!(self.writer(), |pool| {
            sqlx::query(
                "insert into sessions (token_hash, user_id, created_at, expires_at, last_seen_at, ip, user_agent) \
             values ($1, $2, $3, $4, $3, $5, $6)",
            )
            .bind(token_digest(&token))
            .bind(user_id)
            .bind(now)
            .bind(now + SESSION_IDLE_MS)
            .bind(&device.ip)
            .bind(device.stored_user_agent())
            .execute(pool)
            .await
            .map(|r| r.rows_affected())
        })?;
        Ok(token)
    }

    /// The user behind a session cookie, if the session is live. Extends the
    /// session's idle deadline (at most once a minute).
    pub async fn session_user(&self, session_token: &str) -> CoreResult<Option<SessionUser>> {
        let digest = token_digest(session_token);
        let user = self.user_for_session_digest(&digest).await?;
        if let Some(signed_in) = &user {
            let now = now_ms();
            let touched = with_db!(self.writer(), |pool| {
                sqlx::query(
                "update sessions set last_seen_at = $2, expires_at = $3 where token_hash = $1 and last_seen_at < $4"
            )
            .bind(&digest)
            .bind(now)
            .bind(now + SESSION_IDLE_MS)
            .bind(now - TOUCH_INTERVAL_MS)
            .execute(pool)
            .await.map(|r| r.rows_affected())
            })?;
            // The once-a-minute touch doubles as the presence heartbeat.
            if touched == 1 {
                self.presence_heartbeat(&signed_in.tenant_id, &signed_in.id).await?;
            }
        }
        Ok(user)
    }

    pub(crate) async fn user_for_session_digest(&self, digest: &str) -> CoreResult<Option<SessionUser>> {
        let row: Option<SessionUserRow> = with_db!(self.db(), |pool| {
            sqlx::query_as(
            "select u.id, u.email, u.display_name, u.role_id, u.platform_admin, u.tenant_id, t.name as tenant_name \
             from sessions s join users u on u.id = s.user_id join tenants t on t.id = u.tenant_id \
             where s.token_hash = $1 and s.expires_at > $2 and s.created_at > $3"
        )
        .bind(digest)
        .bind(now_ms())
        .bind(now_ms() - SESSION_MAX_MS)
        .fetch_optional(pool)
        .await
        })?;
        row.map(SessionUserRow::into_user).transpose()
    }

    /// Creates a tenant API key. The token is in the result and nowhere else.
    pub async fn create_api_key(&self, tenant_id: &TenantId, name: &str, actor: &Actor) -> CoreResult<CreatedApiKey> {
        self.get_tenant(tenant_id).await?;
        let created_by = (actor.kind == ActorKind::User).then_some(actor.id.as_str());
        self.insert_key(ApiKeyKind::Tenant, Some(tenant_id), created_by, name, actor)
            .await
    }

    /// Creates a platform key for a platform admin.
    pub async fn create_platform_key(&self, user_id: &UserId, name: &str, actor: &Actor) -> CoreResult<CreatedApiKey> {
        let is_platform_admin: Option<bool> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select platform_admin from users where id = $1"
        )
        .bind(user_id)
        .fetch_optional(pool)
        .await)?;
        if is_platform_admin != Some(true) {
            return Err(CoreError::Forbidden);
        }
        self.insert_key(ApiKeyKind::Platform, None, Some(user_id), name, actor)
            .await
    }

    async fn insert_key(
        &self,
        kind: ApiKeyKind,
        tenant_id: Option<&TenantId>,
        created_by: Option<&str>,
        name: &str,
        actor: &Actor,
    ) -> CoreResult<CreatedApiKey> {
        let mut checks = Checks::new();
        let name = checks.required_text("name", Some(name), 100);
        checks.finish()?;
        let prefix_str = match kind {
            ApiKeyKind::Tenant => TENANT_KEY_PREFIX,
            ApiKeyKind::Platform => PLATFORM_KEY_PREFIX,
        };
        let token = format!("{prefix_str}{}", random_token(32));
        let prefix: String = token.chars().take(prefix_str.len() + 8).collect();
        let id = uuid::Uuid::now_v7().to_string();
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into api_keys (id, kind, tenant_id, created_by, name, prefix, token_hash, created_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8)"
        )
        .bind(&id)
        .bind(kind.as_str())
        .bind(tenant_id)
        .bind(created_by)
        .bind(&name)
        .bind(&prefix)
        .bind(token_digest(&token))
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let action = match kind {
            ApiKeyKind::Tenant => "apikey.create",
            ApiKeyKind::Platform => "platformkey.create",
        };
        audit::record(&mut tx, tenant_id, actor, action, kind.as_str_resource(), Some(&id)).await?;
        tx.commit().await?;
        Ok(CreatedApiKey {
            key: ApiKey {
                id,
                name,
                prefix,
                kind,
                created_at: from_ms(now),
                last_used_at: None,
                revoked_at: None,
            },
            token,
        })
    }

    /// A page of a tenant's API keys, newest first, revoked ones included.
    pub async fn list_api_keys(&self, tenant_id: &TenantId, page: &PageRequest) -> CoreResult<Page<ApiKey>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<ApiKeyRow>) = TENANT_KEYS
            .page(self.db(), tenant_id, "created_at desc, id desc", &paging)
            .await?;
        Ok(paging.page(total, rows.into_iter().map(ApiKey::from).collect()))
    }

    /// One of a tenant's API keys.
    pub async fn get_api_key(&self, tenant_id: &TenantId, key_id: &str) -> CoreResult<ApiKey> {
        let row: ApiKeyRow = TENANT_KEYS.get(self.db(), tenant_id, key_id).await?;
        Ok(ApiKey::from(row))
    }

    /// Revokes one of a tenant's API keys; revoking twice is harmless.
    pub async fn revoke_api_key(&self, tenant_id: &TenantId, key_id: &str, actor: &Actor) -> CoreResult<ApiKey> {
        self.get_api_key(tenant_id, key_id).await?;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "update api_keys set revoked_at = $3 where kind = 'tenant' and tenant_id = $1 and id = $2 and revoked_at is null"
        )
        .bind(tenant_id)
        .bind(key_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        audit::record(&mut tx, Some(tenant_id), actor, "apikey.revoke", "apikey", Some(key_id)).await?;
        tx.commit().await?;
        self.keys_changed();
        self.get_api_key(tenant_id, key_id).await
    }

    /// A platform admin's own platform keys, newest first.
    pub async fn list_platform_keys(&self, user_id: &UserId) -> CoreResult<Vec<ApiKey>> {
        let sql = format!(
            "select {KEY_COLUMNS} from api_keys where kind = 'platform' and created_by = $1 order by created_at desc, id desc"
        );
        let rows: Vec<ApiKeyRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(user_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(ApiKey::from).collect())
    }

    /// Revokes one of a platform admin's own platform keys.
    pub async fn revoke_platform_key(&self, user_id: &UserId, key_id: &str, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let done = with_tx!(&mut tx, |conn| {
            sqlx::query(
            "update api_keys set revoked_at = coalesce(revoked_at, $3) where kind = 'platform' and created_by = $1 and id = $2"
        )
        .bind(user_id)
        .bind(key_id)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        if done == 0 {
            return Err(CoreError::NotFound("platform key"));
        }
        audit::record(&mut tx, None, actor, "platformkey.revoke", "platformkey", Some(key_id)).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(())
    }

    /// Resolves a bearer token to its principal. Unknown, revoked and malformed
    /// tokens, and platform keys whose owner is no longer a platform admin, are all
    /// simply unauthenticated.
    pub async fn authenticate_token(&self, token: &str) -> CoreResult<Principal> {
        if !(token.starts_with(TENANT_KEY_PREFIX) || token.starts_with(PLATFORM_KEY_PREFIX)) || token.len() > 128 {
            return Err(CoreError::Unauthenticated);
        }
        #[derive(sqlx::FromRow)]
        struct KeyAuthRow {
            id: String,
            kind: String,
            tenant_id: Option<TenantId>,
            created_by: Option<UserId>,
            last_used_at: Option<i64>,
            owner_is_platform_admin: Option<bool>,
        }
        let digest = token_digest(token);
        let now = now_ms();
        let cache = self.key_cache();
        if let Some((principal, touched_at)) = cache.and_then(|c| c.get(&digest)) {
            // Kept, and its "last used" stamp is fresh enough: no statement at all.
            if touched_at >= now - TOUCH_INTERVAL_MS {
                return Ok(principal);
            }
        }
        let epoch = cache.map(|c| c.epoch());
        let row: Option<KeyAuthRow> = with_db!(self.db(), |pool| {
            sqlx::query_as(
            "select k.id, k.kind, k.tenant_id, k.created_by, k.last_used_at, u.platform_admin as owner_is_platform_admin \
             from api_keys k left join users u on u.id = k.created_by \
             where k.token_hash = $1 and k.revoked_at is null"
        )
        .bind(&digest)
        .fetch_optional(pool)
        .await
        })?;
        let row = row.ok_or(CoreError::Unauthenticated)?;
        let principal = match (row.kind.as_str(), row.tenant_id, row.created_by) {
            ("tenant", Some(tenant_id), _) => Principal::Tenant {
                tenant_id,
                key_id: row.id.clone(),
            },
            ("platform", _, Some(user_id)) if row.owner_is_platform_admin == Some(true) => Principal::Platform {
                user_id,
                key_id: row.id.clone(),
            },
            _ => return Err(CoreError::Unauthenticated),
        };
        let mut touched_at = row.last_used_at.unwrap_or(0);
        if row.last_used_at.is_none_or(|t| t < now - TOUCH_INTERVAL_MS) {
            touched_at = now;
            with_db!(self.writer(), |pool| sqlx::query(
                "update api_keys set last_used_at = $2 where id = $1"
            )
            .bind(&row.id)
            .bind(now)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        }
        if let (Some(cache), Some(epoch)) = (cache, epoch) {
            cache.put(&digest, principal.clone(), epoch, touched_at);
        }
        Ok(principal)
    }
}
