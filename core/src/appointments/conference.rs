//! What the conference of an appointment needs from storage: whether a
//! password opens it, and what the conference report counts when it ends.

use crate::{
    error::CoreResult,
    ids::{AppointmentId, TenantId},
    Services,
};

impl Services {
    /// Whether `password` opens the appointment's conference: true when it
    /// has no password, or when it matches the stored hash (argon2id).
    pub async fn appointment_password_matches(
        &self,
        tenant_id: &TenantId,
        id: &AppointmentId,
        password: &str,
    ) -> CoreResult<bool> {
        let (hash,): (Option<String>,) = super::APPOINTMENTS
            .read(self.db(), tenant_id, id, "password_hash")
            .await?;
        match hash {
            None => Ok(true),
            Some(hash) => Ok(crate::crypto::verify_password(password, &hash).await),
        }
    }

    /// A conference of the appointment ended (its last participant left):
    /// counted in the conference report, from `started_at` to `ended_at` (unix
    /// ms), with the host who joined first as its agent and how many people
    /// were let in.
    pub async fn record_conference(
        &self,
        tenant_id: &TenantId,
        appointment_id: &AppointmentId,
        started_at: i64,
        ended_at: i64,
        host: Option<&str>,
        participants: i64,
    ) -> CoreResult<()> {
        use crate::reports::{
            catalogue::{CONFERENCE, CONFERENCE_PARTICIPANTS},
            facts::{record, Fact},
        };
        let id = uuid::Uuid::now_v7().to_string();
        let conference = Fact {
            kind: CONFERENCE,
            at: started_at,
            value: (ended_at - started_at).max(0),
            agent: host,
            subject: Some(appointment_id),
            dedupe: Some(&id),
            ..Fact::default()
        };
        let mut tx = self.db().begin().await?;
        record(&mut tx, tenant_id, &conference).await?;
        let people = Fact {
            kind: CONFERENCE_PARTICIPANTS,
            value: participants,
            ..conference
        };
        record(&mut tx, tenant_id, &people).await?;
        tx.commit().await
    }
}
