//! The end of a recorded session, and its reason.
//!
//! A browser that closes says nothing reliable, so the server decides when a
//! session of the visitor script ended: after [`SESSION_IDLE_MS`] without a
//! batch, by the server's clock (a visitor's clock may be off by hours). Its
//! length, too, is the server's: from its start to its last batch. It is then
//! closed (its write token appends no more, and the script starts a new
//! session if the visitor comes back), its live viewers hear that it ended,
//! a co-browse on it ends as of its last batch, and it is counted once in the
//! session and session-reason reports (a `SESSION` fact: its length, by
//! reason).
//!
//! The reason says what made the session worth keeping, the first that holds:
//! - `CHAT`: the visitor wrote in the chat during it;
//! - `LIVE_VIEW`: an agent watched it live;
//! - `ERROR`: a script error hit the visitor during it;
//! - `BROWSE`: none of these; the visitor browsed.
//!
//! Recorders that report their own sessions (`POST /widget/track`, `SESSION`)
//! name their reason themselves; both are counted once per session id.

use super::SESSION_IDLE_MS;
use crate::{
    error::CoreResult,
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    reports::{catalogue::SESSION, facts::Fact},
    with_db, with_tx, Services,
};

/// The visitor wrote in the chat during the session.
pub const CHAT: &str = "CHAT";
/// An agent watched the session live.
pub const LIVE_VIEW: &str = "LIVE_VIEW";
/// A script error hit the visitor during the session.
pub const ERROR: &str = "ERROR";
/// Nothing of the above: the visitor browsed.
pub const BROWSE: &str = "BROWSE";

/// How far past the session's last batch a message or error still belongs to
/// it: the script sends a batch at least every 5 s while something happens.
const SLACK_MS: i64 = 60_000;

/// What deciding a session's reason reads of it.
#[derive(sqlx::FromRow)]
struct OpenSession {
    visitor_id: String,
    customer_id: Option<CustomerId>,
    started_at: i64,
    /// When its last batch was stored (its start, before any).
    last_at: i64,
    watched_until: Option<i64>,
}

impl Services {
    /// Ends up to `batch` sessions of the visitor script that have been quiet
    /// since before `now - SESSION_IDLE_MS`, oldest first; returns how many.
    pub async fn end_quiet_recordings(&self, now: i64, batch: i64) -> CoreResult<u64> {
        // The same expression as the partial index `recorded_sessions_open_idx`.
        let due: Vec<(TenantId, String)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select tenant_id, id from recorded_sessions \
             where closed_at is null and write_token_hash is not null \
             and coalesce(last_batch_at, started_at) < $1 \
             order by coalesce(last_batch_at, started_at) limit $2"
        )
        .bind(now - SESSION_IDLE_MS)
        .bind(batch)
        .fetch_all(pool)
        .await)?;
        let mut ended = 0;
        for (tenant_id, id) in due {
            ended += u64::from(self.end_recording(&tenant_id, &id, now).await?);
        }
        Ok(ended)
    }

    /// Ends one session now, whatever its last batch: closes it, decides its
    /// reason, counts it, and tells its live viewers. False when it was ended
    /// already (or is unknown).
    pub async fn end_recording(&self, tenant_id: &TenantId, session_id: &str, now: i64) -> CoreResult<bool> {
        let mut tx = self.db().begin().await?;
        let session: Option<OpenSession> = with_tx!(&mut tx, |conn| {
            sqlx::query_as(
            "select visitor_id, customer_id, started_at, coalesce(last_batch_at, started_at) as last_at, watched_until \
             from recorded_sessions where tenant_id = $1 and id = $2 and closed_at is null"
        )
        .bind(tenant_id)
        .bind(session_id)
        .fetch_optional(conn)
        .await
        })?;
        let Some(session) = session else {
            tx.commit().await?;
            return Ok(false);
        };
        let reason = reason(&mut tx, tenant_id, &session).await?;
        // Another instance may end it at the same time: only one closes it.
        let closed = with_tx!(&mut tx, |conn| sqlx::query(
            "update recorded_sessions set closed_at = $3, reason = $4, updated_at = $3 \
             where tenant_id = $1 and id = $2 and closed_at is null"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(now)
        .bind(reason)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if closed == 0 {
            return Ok(false);
        }
        let tags = crate::sessions::tags_in(&mut tx, tenant_id, session_id).await?;
        let fact = Fact {
            kind: SESSION,
            at: session.started_at,
            value: (session.last_at - session.started_at).max(0),
            dim: Some(reason),
            subject: Some(session_id),
            tags: &tags,
            dedupe: Some(session_id),
            ..Fact::default()
        };
        crate::reports::facts::record(&mut tx, tenant_id, &fact).await?;
        if session.watched_until.is_some() {
            let event = LiveEvent::RecordingEnded {
                session_id: session_id.to_string(),
            };
            self.commit_live(tx, tenant_id, &CustomerId::default(), event).await?;
        } else {
            tx.commit().await?;
        }
        // The visitor left: a co-browse on their page ends with the session.
        // The session has ended whatever happens to it: a failure is logged.
        if let Err(err) = self.end_session_cobrowse(tenant_id, session_id, session.last_at).await {
            tracing::warn!(error = %err, session_id, "ending the co-browse of an ended session failed");
        }
        Ok(true)
    }

    /// Whether a recorded session has ended (an unknown one has not).
    pub async fn recording_ended(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<bool> {
        let closed: Option<Option<i64>> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select closed_at from recorded_sessions where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(session_id)
        .fetch_optional(pool)
        .await)?;
        Ok(closed.flatten().is_some())
    }
}

/// The session's reason (see the module doc).
async fn reason(tx: &mut crate::db::Tx, tenant_id: &TenantId, session: &OpenSession) -> CoreResult<&'static str> {
    let until = session.last_at + SLACK_MS;
    if let Some(customer_id) = &session.customer_id {
        let chatted: Option<i32> = with_tx!(tx, |conn| sqlx::query_scalar(
            "select 1 from messages where tenant_id = $1 and customer_id = $2 and direction = 'INBOUND' \
             and created_at >= $3 and created_at <= $4 limit 1"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .bind(session.started_at)
        .bind(until)
        .fetch_optional(conn)
        .await)?;
        if chatted.is_some() {
            return Ok(CHAT);
        }
    }
    if session.watched_until.is_some() {
        return Ok(LIVE_VIEW);
    }
    let erred: Option<i32> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select 1 from script_errors where tenant_id = $1 and visitor_id = $2 and at >= $3 and at <= $4 limit 1"
    )
    .bind(tenant_id)
    .bind(&session.visitor_id)
    .bind(session.started_at)
    .bind(until)
    .fetch_optional(conn)
    .await)?;
    Ok(if erred.is_some() { ERROR } else { BROWSE })
}
