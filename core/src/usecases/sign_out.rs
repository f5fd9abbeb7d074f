//! A user signs out of the dashboard: the session ends, and so does their
//! presence; an agent who was online or away hands their conversations on
//! (`engine::dispatch`).

use crate::{crypto::token_digest, error::CoreResult, with_db, Services};

impl Services {
    /// Ends a session and the user's presence. Unknown tokens are ignored.
    pub async fn logout(&self, session_token: &str) -> CoreResult<()> {
        if let Some(user) = self.user_for_session_digest(&token_digest(session_token)).await? {
            self.presence_signed_out(&user.tenant_id, &user.id).await?;
        }
        with_db!(self.writer(), |pool| sqlx::query(
            "delete from sessions where token_hash = $1"
        )
        .bind(token_digest(session_token))
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok(())
    }
}
