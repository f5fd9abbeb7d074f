//! A user's signed-in dashboard sessions: which browsers hold one, and ending
//! them.
//!
//! A lost laptop or a shared computer keeps a session for up to 30 days, so
//! its owner sees each session (browser, address, when it signed in and was
//! last used) on their account page and ends the ones that are not theirs any
//! more, or all but this one. A session is named by a short handle made from
//! its token's digest, never by the token: the handle grants nothing.

use crate::{
    audit::{self, Actor},
    crypto::token_digest,
    error::{CoreError, CoreResult},
    ids::{TenantId, UserId},
    model::SignInSession,
    time::{from_ms, now_ms},
    with_db, with_tx, Services,
};

/// Hex digits of a session's digest that make its handle (64 bits).
const HANDLE_HEX: usize = 16;
/// The longest user agent kept.
const USER_AGENT_MAX: usize = 512;

/// How long a dashboard session lives at most, however active: a stolen
/// cookie kept busy does not last for ever.
pub const SESSION_MAX_MS: i64 = 30 * 24 * 3600 * 1000;

/// Where a sign-in comes from, kept with its session.
#[derive(Debug, Clone, Default)]
pub struct SignInDevice {
    /// The client's address (behind a trusted proxy, the one it names).
    pub ip: Option<String>,
    /// The browser's `User-Agent`.
    pub user_agent: Option<String>,
}

impl SignInDevice {
    /// The user agent as stored: at most [`USER_AGENT_MAX`] bytes.
    pub(crate) fn stored_user_agent(&self) -> Option<String> {
        self.user_agent.as_deref().map(|ua| {
            let mut end = ua.len().min(USER_AGENT_MAX);
            while !ua.is_char_boundary(end) {
                end -= 1;
            }
            ua[..end].to_string()
        })
    }
}

/// "Chrome 156 on Linux" from a user agent, when it names a browser.
fn describe(user_agent: &str) -> Option<String> {
    let parsed = woothee::parser::Parser::new().parse(user_agent)?;
    if parsed.name == woothee::woothee::VALUE_UNKNOWN {
        return None;
    }
    let major = parsed
        .version
        .split('.')
        .next()
        .filter(|v| !v.is_empty() && *v != "UNKNOWN");
    let browser = match major {
        Some(major) => format!("{} {major}", parsed.name),
        None => parsed.name.to_string(),
    };
    Some(if parsed.os == woothee::woothee::VALUE_UNKNOWN {
        browser
    } else {
        format!("{browser} on {}", parsed.os)
    })
}

/// The handle of the session with this token digest.
fn handle(digest: &str) -> String {
    digest[..HANDLE_HEX.min(digest.len())].to_string()
}

#[derive(sqlx::FromRow)]
struct SessionRow {
    token_hash: String,
    created_at: i64,
    last_seen_at: i64,
    expires_at: i64,
    ip: Option<String>,
    user_agent: Option<String>,
}

impl Services {
    /// The user's live sessions, most recently used first; `current_token` (the
    /// asking browser's cookie) marks its own.
    pub async fn sign_in_sessions(
        &self,
        user_id: &UserId,
        current_token: Option<&str>,
    ) -> CoreResult<Vec<SignInSession>> {
        let now = now_ms();
        let rows: Vec<SessionRow> = with_db!(self.db(), |pool| sqlx::query_as(
            "select token_hash, created_at, last_seen_at, expires_at, ip, user_agent from sessions \
             where user_id = $1 and expires_at > $2 and created_at > $3 order by last_seen_at desc, created_at desc"
        )
        .bind(user_id)
        .bind(now)
        .bind(now - SESSION_MAX_MS)
        .fetch_all(pool)
        .await)?;
        let current = current_token.map(token_digest);
        Ok(rows
            .into_iter()
            .map(|r| SignInSession {
                id: handle(&r.token_hash),
                device: r.user_agent.as_deref().and_then(describe),
                ip: r.ip,
                created_at: from_ms(r.created_at),
                last_seen_at: from_ms(r.last_seen_at),
                ends_at: from_ms(r.expires_at.min(r.created_at + SESSION_MAX_MS)),
                current: current.as_deref() == Some(r.token_hash.as_str()),
            })
            .collect())
    }

    /// Ends one of the user's sessions, named by its handle: that browser is
    /// signed out at its next request. Only the user's own sessions; another's
    /// handle is 404. Audited as `session.end`.
    pub async fn end_sign_in_session(&self, user_id: &UserId, id: &str, actor: &Actor) -> CoreResult<()> {
        let tenant_id = self.user_tenant(user_id).await?;
        let mut tx = self.db().begin().await?;
        let ended = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from sessions where user_id = $1 and substr(token_hash, 1, 16) = $2"
        )
        .bind(user_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if ended == 0 {
            return Err(CoreError::NotFound("session"));
        }
        audit::record(&mut tx, Some(&tenant_id), actor, "session.end", "user", Some(user_id)).await?;
        tx.commit().await
    }

    /// Ends every session of the user but the one of `current_token`. Returns
    /// how many ended. Audited as `session.end_others`.
    pub async fn end_other_sign_in_sessions(
        &self,
        user_id: &UserId,
        current_token: &str,
        actor: &Actor,
    ) -> CoreResult<u64> {
        let tenant_id = self.user_tenant(user_id).await?;
        let mut tx = self.db().begin().await?;
        let ended = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from sessions where user_id = $1 and token_hash <> $2"
        )
        .bind(user_id)
        .bind(token_digest(current_token))
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(&tenant_id),
            actor,
            "session.end_others",
            "user",
            Some(user_id),
        )
        .await?;
        tx.commit().await?;
        Ok(ended)
    }

    async fn user_tenant(&self, user_id: &UserId) -> CoreResult<TenantId> {
        let tenant: Option<TenantId> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select tenant_id from users where id = $1"
        )
        .bind(user_id)
        .fetch_optional(pool)
        .await)?;
        tenant.ok_or(CoreError::NotFound("user"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_named_by_browser_and_system() {
        let chrome =
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.8078.73 Safari/537.36";
        assert_eq!(describe(chrome).as_deref(), Some("Chrome 156 on Linux"));
        let firefox = "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0";
        assert_eq!(describe(firefox).as_deref(), Some("Firefox 133 on Windows 10"));
        assert!(
            describe("curl/8.5.0").is_some_and(|d| d.contains("curl")),
            "a tool is named too"
        );
        assert_eq!(describe(""), None);
        let long = SignInDevice {
            ip: None,
            user_agent: Some("é".repeat(400)),
        };
        let kept = long.stored_user_agent().unwrap();
        assert!(kept.len() <= USER_AGENT_MAX && kept.chars().all(|c| c == 'é'));
    }
}
