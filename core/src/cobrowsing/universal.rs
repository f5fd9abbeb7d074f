//! Universal co-browsing: which instance runs a session's browser, and the
//! session's end, with its facts and audit.

use super::session_ended;
use crate::{
    audit::{self, Actor},
    db::Backend,
    error::{CoreError, CoreResult},
    ids::TenantId,
    reports::facts::{MeetingFact, MeetingKind},
    time::now_ms,
    with_tx, Services,
};

/// An instance's claim on a universal session lapses when not renewed this long.
pub const CLAIM_STALE_MS: i64 = 30_000;

/// Where a universal co-browsing session's browser runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CobrowseClaim {
    /// On the asking instance: it runs (or starts) the browser.
    Mine,
    /// On another instance, reachable at this internal URL.
    Elsewhere(String),
    /// Nowhere yet, and not here either: the session's tenant runs as many
    /// sessions as its `cobrowseSessions` allows.
    TenantBusy,
}

/// How a universal co-browsing session went, for its facts.
#[derive(Debug, Clone)]
pub struct UniversalEnd {
    /// The tenant.
    pub tenant_id: TenantId,
    /// The session.
    pub session_id: String,
    /// Why it ended: `idle`, `expired`, `ended_by_host`, `browser_crashed`, `shutdown`.
    pub reason: String,
    /// When the browser started, unix ms.
    pub started_at: i64,
    /// The host, when one was named.
    pub host_user_id: Option<String>,
    /// People who joined besides the host.
    pub guests: i64,
}

impl Services {
    /// Claims a universal session for the instance at `instance_url`, unless
    /// another instance holds a fresh claim, or the session's tenant already
    /// runs `tenant_sessions` sessions (on any instance). Refuses a session
    /// that ended.
    pub async fn claim_cobrowse(
        &self,
        session_id: &str,
        instance_url: &str,
        tenant_sessions: i64,
    ) -> CoreResult<CobrowseClaim> {
        let now = now_ms();
        let stale = now - CLAIM_STALE_MS;
        let mut tx = self.db().begin().await?;
        // Two instances claiming two sessions of one tenant at once must not
        // both see room for one more: PostgreSQL serialises the tenant's
        // claims on a lock; SQLite has one writer anyway.
        if self.db().backend() == Backend::Postgres {
            with_tx!(&mut tx, |conn| sqlx::query(
                "select pg_advisory_xact_lock(hashtext('cobrowse:' || tenant_id)) from cobrowse_sessions where id = $1"
            )
            .bind(session_id)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        let running: i64 = with_tx!(&mut tx, |conn| sqlx::query_scalar(
            "select count(*) from cobrowse_sessions o where o.tenant_id = \
             (select tenant_id from cobrowse_sessions where id = $1) \
             and o.id <> $1 and o.ended_at is null and o.instance_url is not null and o.instance_seen_at >= $2"
        )
        .bind(session_id)
        .bind(stale)
        .fetch_one(conn)
        .await)?;
        let claimed = if running < tenant_sessions {
            with_tx!(&mut tx, |conn| sqlx::query(
                "update cobrowse_sessions set instance_url = $1, instance_seen_at = $2, \
                 started_at = coalesce(started_at, $2) \
                 where id = $3 and ended_at is null \
                 and (instance_url is null or instance_url = $1 or instance_seen_at < $4)"
            )
            .bind(instance_url)
            .bind(now)
            .bind(session_id)
            .bind(stale)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?
        } else {
            0
        };
        let owner: Option<(Option<String>, Option<i64>, Option<i64>)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select instance_url, instance_seen_at, ended_at from cobrowse_sessions where id = $1"
        )
        .bind(session_id)
        .fetch_optional(conn)
        .await)?;
        tx.commit().await?;
        match owner {
            None => Err(CoreError::NotFound("co-browsing session")),
            Some((_, _, Some(_))) => Err(session_ended()),
            Some(_) if claimed == 1 => Ok(CobrowseClaim::Mine),
            Some((Some(url), Some(seen), None)) if url != instance_url && seen >= stale => {
                Ok(CobrowseClaim::Elsewhere(url))
            }
            Some(_) if running >= tenant_sessions => Ok(CobrowseClaim::TenantBusy),
            Some(_) => Err(CoreError::Internal("co-browsing claim vanished".into())),
        }
    }

    /// Renews this instance's claim while its browser runs.
    pub async fn renew_cobrowse(&self, session_id: &str, instance_url: &str) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set instance_seen_at = $1 where id = $2 and instance_url = $3"
        )
        .bind(now_ms())
        .bind(session_id)
        .bind(instance_url)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await
    }

    /// Gives up a claim whose browser never started, so that the next attempt
    /// (on any instance) may try again.
    pub async fn release_cobrowse(&self, session_id: &str, instance_url: &str) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set instance_url = null, instance_seen_at = null \
             where id = $1 and instance_url = $2"
        )
        .bind(session_id)
        .bind(instance_url)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await
    }

    /// Marks a universal session ended, records its facts for the universal
    /// co-browse report and audits it (`cobrowse.end`).
    pub async fn end_cobrowse(&self, end: &UniversalEnd) -> CoreResult<()> {
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let ended = with_tx!(&mut tx, |conn| sqlx::query(
            "update cobrowse_sessions set ended_at = $1, end_reason = $2, instance_url = null \
             where id = $3 and tenant_id = $4 and ended_at is null"
        )
        .bind(now)
        .bind(&end.reason)
        .bind(&end.session_id)
        .bind(&end.tenant_id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if ended == 0 {
            return Ok(());
        }
        audit::record(
            &mut tx,
            Some(&end.tenant_id),
            &Actor::system(&end.reason),
            "cobrowse.end",
            "cobrowse",
            Some(&end.session_id),
        )
        .await?;
        tx.commit().await?;
        let meeting = MeetingFact {
            id: end.session_id.clone(),
            host_user_id: end.host_user_id.clone(),
            started_at: end.started_at,
            ended_at: now.max(end.started_at),
            participants: end.guests,
            tags: Vec::new(),
        };
        self.record_meeting(&end.tenant_id, MeetingKind::UniversalCobrowse, &meeting)
            .await
    }

    /// Audits a participant joining a universal session (`cobrowse.join`).
    pub async fn audit_cobrowse(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        actor: &Actor,
        action: &str,
    ) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        audit::record(&mut tx, Some(tenant_id), actor, action, "cobrowse", Some(session_id)).await?;
        tx.commit().await
    }
}
