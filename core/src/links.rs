//! Generated links: Universal Co-Browsing (spec 2.12) and live view (spec 2.13).
//!
//! - A co-browsing link request creates a session with a random id and two random
//!   tokens, one for the host and one for joiners; only their digests are stored.
//!   Both links open `/cobrowse/{sessionId}?token=…` in the dashboard, which tells
//!   host from joiner by the token. They work for 24 hours.
//! - A live-view link carries a single-use token that lives 10 minutes. Opening it
//!   opens the live view of that one session, for the named user, in the chosen
//!   language (`en`, `de`, `jp`, `uk`, `ru`; default `en`). It does **not** sign
//!   the user in: whoever holds a tenant API key can mint such a link for any
//!   user, admins included, so the link grants exactly what it names and nothing
//!   more. Opening it swaps the link's token for a *grant*, a second random token
//!   kept only as its digest, bound to the session id, that lapses after
//!   [`LIVEVIEW_GRANT_IDLE_MS`] without use and at [`LIVEVIEW_GRANT_MAX_MS`] in any
//!   case. A grant is not a dashboard session: no page, server function or REST
//!   operation other than the live view of its session accepts it, and it never
//!   carries the user's role or platform rights.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor, ActorKind},
    crypto::{random_token, token_digest},
    error::{CoreError, CoreResult},
    ids::{TenantId, UserId},
    time::{from_ms, now_ms},
    validate::Checks,
    with_db, with_tx, Services,
};

/// How long co-browsing links work.
pub const COBROWSE_TTL_MS: i64 = 24 * 3600 * 1000;
/// How long a live-view link works (once).
pub const LIVEVIEW_TTL_MS: i64 = 10 * 60 * 1000;
/// A live-view grant lapses after this long without being used.
pub const LIVEVIEW_GRANT_IDLE_MS: i64 = 15 * 60 * 1000;
/// A live-view grant lapses this long after the link was opened, used or not.
pub const LIVEVIEW_GRANT_MAX_MS: i64 = 4 * 3600 * 1000;
/// A grant's idle deadline is pushed forward at most this often.
const GRANT_TOUCH_INTERVAL_MS: i64 = 60 * 1000;
/// Live-view UI languages.
pub const LIVEVIEW_LANGUAGES: [&str; 5] = ["en", "de", "jp", "uk", "ru"];

/// Request for co-browsing links (spec 2.12).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"url": "https://shop.example.com/checkout", "userEmail": "agent@example.com"}))]
pub struct CobrowseLinkRequest {
    /// Absolute http(s) URL the session starts with (required).
    #[schema(required = true, nullable = false, format = "uri", min_length = 1, max_length = 2048)]
    pub url: Option<String>,
    /// E-mail of the tenant user who hosts the session: a user of this tenant,
    /// else 422 `unknown_reference`.
    #[schema(format = Email, max_length = 254)]
    pub user_email: Option<String>,
}

/// The two co-browsing links.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CobrowseLinks {
    /// Random session id.
    pub session_id: String,
    /// Link for the host.
    pub host_link: String,
    /// Link for joining users.
    pub join_link: String,
    /// When both links stop working.
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// Who opened a co-browsing link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CobrowseRole {
    /// The host.
    Host,
    /// A joiner.
    Guest,
}

/// A co-browsing session as its link shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CobrowseSession {
    /// Session id.
    pub session_id: String,
    /// Host or guest.
    pub role: CobrowseRole,
    /// The URL the session starts with.
    pub url: String,
    /// The host's e-mail, when one was named.
    pub host_email: Option<String>,
    /// When the links stop working.
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// The tenant (for the server only).
    #[serde(skip)]
    pub tenant_id: TenantId,
    /// The host's user id (for the server only).
    #[serde(skip)]
    pub host_user_id: Option<String>,
    /// The host's name as participants see it.
    pub host_name: Option<String>,
}

/// Request for a live-view link (spec 2.13).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"sessionId": "4f2c9e", "email": "agent@example.com", "language": "de"}))]
pub struct LiveViewLinkRequest {
    /// Id of a recorded visitor session of the tenant (required).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub session_id: Option<String>,
    /// E-mail of the tenant user for whom the view is opened (required). The link
    /// opens the live view of this one session on that user's behalf; it does not
    /// sign the user in to anything else.
    #[schema(required = true, nullable = false, format = Email, max_length = 254)]
    pub email: Option<String>,
    /// UI language: `en` (default), `de`, `jp`, `uk` or `ru`.
    pub language: Option<String>,
}

impl LiveViewLinkRequest {
    /// The languages `language` takes, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        let mut languages: Vec<serde_json::Value> = LIVEVIEW_LANGUAGES.iter().map(|l| serde_json::json!(l)).collect();
        languages.push(serde_json::Value::Null);
        serde_json::json!([{"properties": {"language": {"enum": languages}}}])
    }
}

/// A live-view link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LiveViewLink {
    /// The public link; it works once.
    pub link: String,
    /// When it stops working if unused.
    pub expires_at: chrono::DateTime<chrono::Utc>,
}

/// What opening a live-view link yields.
#[derive(Debug, Clone)]
pub struct LiveViewOpened {
    /// The grant: the credential for this session's live view, and nothing else.
    /// Never log it.
    pub grant_token: String,
    /// When the grant lapses at the latest (unix ms).
    pub grant_until: i64,
    /// The visitor session to show.
    pub session_id: String,
    /// UI language.
    pub language: String,
}

/// A live grant: what a live-view link, once opened, still allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveViewGrant {
    /// The tenant of the session.
    pub tenant_id: TenantId,
    /// The user on whose behalf the view was opened.
    pub user_id: UserId,
    /// The one visitor session it shows.
    pub session_id: String,
    /// UI language.
    pub language: String,
}

impl Services {
    /// The id of the tenant's user whose e-mail address is `email`, or `None`
    /// with `unknown_reference` recorded at `field`. Only the address counts:
    /// an id that happens to match names no one here.
    async fn user_by_email(
        &self,
        tenant_id: &TenantId,
        checks: &mut Checks,
        field: &str,
        email: &str,
    ) -> CoreResult<Option<UserId>> {
        let found = self.find_user(tenant_id, email).await;
        let found = found.and_then(|u| {
            if u.email == email.to_lowercase() {
                Ok(u)
            } else {
                Err(CoreError::NotFound("user"))
            }
        });
        Ok(checks.reference(field, "user with e-mail", email, found)?.map(|u| u.id))
    }

    /// Creates co-browsing links.
    pub async fn create_cobrowse_links(
        &self,
        tenant_id: &TenantId,
        input: CobrowseLinkRequest,
        actor: &Actor,
    ) -> CoreResult<CobrowseLinks> {
        let mut checks = Checks::new();
        let url = checks.required_text("url", input.url.as_deref(), 2048);
        if !url.is_empty() {
            checks.http_url("url", &url);
        }
        let host = match input.user_email.as_deref().map(str::trim).filter(|e| !e.is_empty()) {
            Some(email) => self.user_by_email(tenant_id, &mut checks, "userEmail", email).await?,
            None => None,
        };
        checks.finish()?;
        let session_id = uuid::Uuid::new_v4().simple().to_string();
        let host_token = random_token(32);
        let join_token = random_token(32);
        let now = now_ms();
        let expires = now + COBROWSE_TTL_MS;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "insert into cobrowse_sessions (id, tenant_id, url, host_user_id, host_token_hash, join_token_hash, created_at, expires_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8)"
        )
        .bind(&session_id)
        .bind(tenant_id)
        .bind(&url)
        .bind(&host)
        .bind(token_digest(&host_token))
        .bind(token_digest(&join_token))
        .bind(now)
        .bind(expires)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "cobrowse.create",
            "cobrowse",
            Some(&session_id),
        )
        .await?;
        tx.commit().await?;
        let base = format!("{}/cobrowse/{session_id}", self.public_url());
        Ok(CobrowseLinks {
            host_link: format!("{base}?token={host_token}"),
            join_link: format!("{base}?token={join_token}"),
            session_id,
            expires_at: from_ms(expires),
        })
    }

    /// The co-browsing session a link opens, if the token is right and fresh.
    pub async fn open_cobrowse(&self, session_id: &str, token: &str) -> CoreResult<CobrowseSession> {
        #[derive(sqlx::FromRow)]
        struct Row {
            url: String,
            host_token_hash: String,
            join_token_hash: String,
            expires_at: i64,
            ended_at: Option<i64>,
            tenant_id: TenantId,
            host_user_id: Option<String>,
            host_email: Option<String>,
            host_name: Option<String>,
        }
        let row: Option<Row> = with_db!(self.db(), |pool| sqlx::query_as(
            "select c.url, c.host_token_hash, c.join_token_hash, c.expires_at, c.ended_at, c.tenant_id, \
             c.host_user_id, u.email as host_email, u.display_name as host_name \
             from cobrowse_sessions c left join users u on u.id = c.host_user_id where c.id = $1"
        )
        .bind(session_id)
        .fetch_optional(pool)
        .await)?;
        let row = row.ok_or(CoreError::NotFound("co-browsing session"))?;
        let digest = token_digest(token);
        let role = if digest == row.host_token_hash {
            CobrowseRole::Host
        } else if digest == row.join_token_hash {
            CobrowseRole::Guest
        } else {
            return Err(CoreError::NotFound("co-browsing session"));
        };
        if row.expires_at <= now_ms() {
            return Err(CoreError::Conflict {
                field: None,
                code: "link_expired",
                message: "this link has expired".into(),
            });
        }
        if row.ended_at.is_some() {
            return Err(crate::cobrowsing::session_ended());
        }
        let host_name = row
            .host_name
            .filter(|n| !n.trim().is_empty())
            .or_else(|| row.host_email.clone());
        Ok(CobrowseSession {
            session_id: session_id.to_string(),
            role,
            url: row.url,
            host_email: row.host_email,
            expires_at: from_ms(row.expires_at),
            tenant_id: row.tenant_id,
            host_user_id: row.host_user_id,
            host_name,
        })
    }

    /// Creates a single-use live-view link for a tenant user and a recorded session.
    pub async fn create_liveview_link(
        &self,
        tenant_id: &TenantId,
        input: LiveViewLinkRequest,
        actor: &Actor,
    ) -> CoreResult<LiveViewLink> {
        let mut checks = Checks::new();
        let session_id = checks.required_text("sessionId", input.session_id.as_deref(), 200);
        let email = checks.required_text("email", input.email.as_deref(), 254);
        let language = input.language.unwrap_or_else(|| "en".into());
        if !LIVEVIEW_LANGUAGES.contains(&language.as_str()) {
            checks.push("language", "invalid_enum", "language must be one of en, de, jp, uk, ru");
        }
        let mut user_id = None;
        if !email.is_empty() {
            user_id = self.user_by_email(tenant_id, &mut checks, "email", &email).await?;
        }
        if !session_id.is_empty() {
            let session = self.get_recorded_session(tenant_id, &session_id).await;
            checks.reference("sessionId", "session", &session_id, session)?;
        }
        checks.finish()?;
        let token = random_token(32);
        let now = now_ms();
        let expires = now + LIVEVIEW_TTL_MS;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "insert into liveview_tokens (token_hash, tenant_id, user_id, session_id, language, created_at, expires_at) \
             values ($1, $2, $3, $4, $5, $6, $7)"
        )
        .bind(token_digest(&token))
        .bind(tenant_id)
        .bind(&user_id)
        .bind(&session_id)
        .bind(&language)
        .bind(now)
        .bind(expires)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "liveview.link",
            "session",
            Some(&session_id),
        )
        .await?;
        tx.commit().await?;
        Ok(LiveViewLink {
            link: format!("{}/liveview/open?token={token}", self.public_url()),
            expires_at: from_ms(expires),
        })
    }

    /// The language of a live-view link that can still be opened (else
    /// unauthenticated). Reading it spends nothing: link scanners in mail and
    /// chat fetch every link, and must not burn a single-use one.
    pub async fn liveview_link_language(&self, token: &str) -> CoreResult<String> {
        let language: Option<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select language from liveview_tokens where token_hash = $1 and used_at is null and expires_at > $2"
        )
        .bind(token_digest(token))
        .bind(now_ms())
        .fetch_optional(pool)
        .await)?;
        language.ok_or(CoreError::Unauthenticated)
    }

    /// Uses a live-view link: once, before it expires. Yields a grant for the live
    /// view of its session (see the module docs), never a dashboard session.
    /// `opened_by` (tenant, user) is the dashboard user signed in where it was
    /// opened, if any: when they belong to the link's tenant, the audit entry
    /// names them rather than the link's addressee.
    pub async fn open_liveview(
        &self,
        token: &str,
        ip: Option<String>,
        opened_by: Option<(&str, &str)>,
    ) -> CoreResult<LiveViewOpened> {
        #[derive(sqlx::FromRow)]
        struct Row {
            tenant_id: TenantId,
            user_id: UserId,
            session_id: String,
            language: String,
        }
        let digest = token_digest(token);
        let grant_token = random_token(32);
        let now = now_ms();
        let grant_until = now + LIVEVIEW_GRANT_MAX_MS;
        let mut tx = self.db().begin().await?;
        // Claim the token atomically: of two simultaneous opens, one wins.
        let claimed = with_tx!(&mut tx, |conn| sqlx::query(
            "update liveview_tokens set used_at = $2, grant_hash = $3, grant_idle_until = $4, grant_until = $5 \
             where token_hash = $1 and used_at is null and expires_at > $2"
        )
        .bind(&digest)
        .bind(now)
        .bind(token_digest(&grant_token))
        .bind(now + LIVEVIEW_GRANT_IDLE_MS)
        .bind(grant_until)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if claimed != 1 {
            return Err(CoreError::Unauthenticated);
        }
        let row: Row = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select tenant_id, user_id, session_id, language from liveview_tokens where token_hash = $1"
        )
        .bind(&digest)
        .fetch_one(conn)
        .await)?;
        // Who opened it: the user signed in where it was opened, else the user
        // it was made for; from the opener's address either way. Who minted it
        // is the actor of the `liveview.link` entry.
        let actor = Actor {
            kind: ActorKind::User,
            id: opened_by
                .filter(|(tenant, _)| row.tenant_id == *tenant)
                .map_or_else(|| row.user_id.to_string(), |(_, user)| user.to_string()),
            ip,
            request_id: None,
        };
        audit::record(
            &mut tx,
            Some(&row.tenant_id),
            &actor,
            "liveview.open",
            "session",
            Some(&row.session_id),
        )
        .await?;
        tx.commit().await?;
        Ok(LiveViewOpened {
            grant_token,
            grant_until,
            session_id: row.session_id,
            language: row.language,
        })
    }

    /// The grant behind `grant_token`, if it is live and names `session_id`.
    /// Anything else (unknown, lapsed, another session) is simply unauthenticated.
    /// Using a grant pushes its idle deadline forward, up to its hard limit.
    pub async fn liveview_grant(&self, grant_token: &str, session_id: &str) -> CoreResult<LiveViewGrant> {
        #[derive(sqlx::FromRow)]
        struct Row {
            tenant_id: TenantId,
            user_id: UserId,
            session_id: String,
            language: String,
            grant_idle_until: i64,
            grant_until: i64,
        }
        let digest = token_digest(grant_token);
        let now = now_ms();
        let row: Option<Row> = with_db!(self.db(), |pool| sqlx::query_as(
            "select tenant_id, user_id, session_id, language, grant_idle_until, grant_until \
             from liveview_tokens where grant_hash = $1 and grant_idle_until > $2 and grant_until > $2"
        )
        .bind(&digest)
        .bind(now)
        .fetch_optional(pool)
        .await)?;
        let row = row
            .filter(|r| r.session_id == session_id)
            .ok_or(CoreError::Unauthenticated)?;
        let idle_until = (now + LIVEVIEW_GRANT_IDLE_MS).min(row.grant_until);
        if idle_until - row.grant_idle_until >= GRANT_TOUCH_INTERVAL_MS {
            with_db!(self.writer(), |pool| sqlx::query(
                "update liveview_tokens set grant_idle_until = $2 where grant_hash = $1"
            )
            .bind(&digest)
            .bind(idle_until)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))?;
        }
        Ok(LiveViewGrant {
            tenant_id: row.tenant_id,
            user_id: row.user_id,
            session_id: row.session_id,
            language: row.language,
        })
    }
}
