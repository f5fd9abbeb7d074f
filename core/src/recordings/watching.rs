//! Live viewers: a viewer keeps a session watched for [`WATCH_MS`] at a time,
//! and the visitor script streams while it is.

use super::*;
use crate::ids::CustomerId;

impl Services {
    /// Whether a live viewer watches the session now.
    pub async fn recording_watched(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<bool> {
        let (until,): (Option<i64>,) = SESSIONS.read(self.db(), tenant_id, session_id, "watched_until").await?;
        Ok(until.is_some_and(|u| u > now_ms()))
    }
    /// A live viewer is on the session for [`WATCH_MS`] more. A viewer who
    /// `joined` just now is announced (through any instance): the visitor script
    /// takes a full snapshot for it and streams. Viewers renew while they stay.
    pub async fn watch_recording(&self, tenant_id: &TenantId, session_id: &str, joined: bool) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let found = with_tx!(&mut tx, |conn| sqlx::query(
            "update recorded_sessions set watched_until = $3 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(now_ms() + WATCH_MS)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if found == 0 {
            return Err(CoreError::NotFound("session"));
        }
        if !joined {
            tx.commit().await?;
            return Ok(());
        }
        let event = LiveEvent::RecordingWatched {
            session_id: session_id.to_string(),
        };
        self.commit_live(tx, tenant_id, &CustomerId::default(), event).await
    }
}
