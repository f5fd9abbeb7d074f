//! Outgoing e-mail: the outbox every mail is written to, and appointment
//! invitations.
//!
//! A mail is a row of `mail_outbox`, written in the same step as what caused it,
//! together with a durable job ([`crate::JobKind::Mail`], keyed by the mail
//! id) that the server's job runner runs to send it. With an SMTP server
//! configured the runner sends the mail and records `SENT`, or moves the job to
//! the next retry, or records `FAILED` once the attempts of [`mail_backoff`] are
//! spent. Without an SMTP server the runner parks the job and the mail stays
//! `PENDING`: admins read it in the dashboard's outbox, trying Rapport needs no
//! mail server, and nothing written is lost. A server started with SMTP gives
//! every `PENDING` mail a due job again ([`Services::schedule_pending_mail`]).
//!
//! The outbox row keeps the mail's own schedule (`attempts`, `next_attempt_at`,
//! what the dashboard shows); the job only says when the runner looks at it next.

use std::time::Duration;

use chrono::TimeZone;
use serde::{Deserialize, Serialize};

use crate::{
    appointments::{Appointment, ValidType},
    audit::{self, Actor},
    backoff::Backoff,
    db::{TenantTable, Tx},
    error::CoreResult,
    ids::{AppointmentId, TenantId, UserId},
    jobs::{self, JobKind},
    model::{Page, PageRequest},
    sealing::{Purpose, Sealer},
    time::{duration_ms, from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

/// When to try a mail again: after 30 s, 2 min, 10 min, 30 min and 1 h; a
/// mail whose sixth attempt fails counts as failed.
pub fn mail_backoff() -> Backoff {
    let s = Duration::from_secs;
    Backoff::new(vec![s(30), s(120), s(600), s(1800), s(3600)])
}

/// A mail in the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Mail {
    /// Id.
    pub id: String,
    /// The recipient's address.
    pub to: String,
    /// Subject.
    pub subject: String,
    /// Plain-text body.
    pub body: String,
    /// What it is about, e.g. `appointment:<id>`.
    pub about: Option<String>,
    /// `PENDING`, `SENT` or `FAILED`.
    pub status: String,
    /// Attempts to send it so far.
    pub attempts: i64,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was written.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When the SMTP server accepted it.
    pub sent_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// A mail claimed for sending, with its tenant.
#[derive(Debug, Clone)]
pub struct ClaimedMail {
    /// The tenant it belongs to.
    pub tenant_id: TenantId,
    /// The mail.
    pub mail: Mail,
}

#[derive(sqlx::FromRow)]
struct MailRow {
    id: String,
    tenant_id: TenantId,
    to_address: String,
    subject: String,
    body: String,
    about: Option<String>,
    status: String,
    attempts: i64,
    last_error: Option<String>,
    created_at: i64,
    sent_at: Option<i64>,
}

const COLUMNS: &str =
    "id, tenant_id, to_address, subject, body, about, status, attempts, last_error, created_at, sent_at";

/// The outbox as its pages read it.
const OUTBOX: TenantTable = TenantTable {
    table: "mail_outbox",
    columns: COLUMNS,
    what: "mail",
    narrow: "",
};

impl MailRow {
    /// The mail, its body opened (bodies are sealed at rest: an invitation's
    /// carries the join link).
    fn into_claimed(self, sealer: &Sealer) -> CoreResult<ClaimedMail> {
        let body = sealer.open(Purpose::MailBody, &self.body)?;
        Ok(ClaimedMail {
            tenant_id: self.tenant_id,
            mail: Mail {
                id: self.id,
                to: self.to_address,
                subject: self.subject,
                body,
                about: self.about,
                status: self.status,
                attempts: self.attempts,
                last_error: self.last_error,
                created_at: from_ms(self.created_at),
                sent_at: self.sent_at.map(from_ms),
            },
        })
    }
}

/// A mail to write: recipient, subject, body, what it is about.
#[derive(Debug, Clone)]
pub(crate) struct NewMail {
    pub to: String,
    pub subject: String,
    pub body: String,
    pub about: Option<String>,
}

/// Writes mails to the outbox as part of `tx`, each with the job that sends it.
/// Bodies are sealed with `sealer` (see [`crate::sealing`]).
///
/// The mails count against the tenant's daily allowance
/// ([`TenantLimits::mails_per_day`](crate::limits::TenantLimits)): past it,
/// nothing is written and the answer is 429 `mail_allowance_spent`.
pub(crate) async fn queue(tx: &mut Tx, sealer: &Sealer, tenant_id: &TenantId, mails: &[NewMail]) -> CoreResult<()> {
    let now = now_ms();
    if mails.is_empty() {
        return Ok(());
    }
    crate::limits::spend_mails(tx, tenant_id, mails.len(), now).await?;
    for mail in mails {
        let id = uuid::Uuid::now_v7().to_string();
        let body = sealer.seal(Purpose::MailBody, &mail.body);
        with_tx!(tx, |conn| {
            sqlx::query(
            "insert into mail_outbox (id, tenant_id, to_address, subject, body, about, status, next_attempt_at, created_at) \
             values ($1, $2, $3, $4, $5, $6, 'PENDING', $7, $7)"
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(&mail.to)
        .bind(&mail.subject)
        .bind(&body)
        .bind(&mail.about)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        // The payload stays empty: what the mail says stays in the outbox.
        jobs::schedule(tx, Some(tenant_id), JobKind::Mail, &id, now, &serde_json::json!({})).await?;
    }
    Ok(())
}

/// `Tue 1 Dec 2026, 15:00` in the appointment's zone, with the zone's name.
fn local_time(appointment: &Appointment, at: chrono::DateTime<chrono::Utc>) -> String {
    let zone: chrono_tz::Tz = appointment.timezone_id.parse().unwrap_or(chrono_tz::UTC);
    format!(
        "{} ({})",
        zone.from_utc_datetime(&at.naive_utc()).format("%a %-d %b %Y, %H:%M"),
        appointment.timezone_id
    )
}

/// The invitation mails of an appointment, one per attendee. `updated` says the
/// appointment changed since an earlier invitation.
pub(crate) fn invitations(appointment: &Appointment, organiser: &str, updated: bool) -> Vec<NewMail> {
    let subject = format!(
        "{}{} — {}",
        if updated { "Updated: " } else { "" },
        appointment.title,
        local_time(appointment, appointment.date)
    );
    let mut body = format!(
        "{organiser} invites you to a video meeting.\n\n\
         {}\n\
         When: {}, {} minutes\n\
         Join: {}\n",
        appointment.title,
        local_time(appointment, appointment.date),
        appointment.duration_in_minutes,
        appointment.join_link,
    );
    body.push_str(&match appointment.valid_type {
        ValidType::Appointment => "The link opens when the meeting starts and closes when it ends.\n".to_string(),
        ValidType::Hours => format!(
            "The link works from {} to {}.\n",
            local_time(appointment, appointment.valid_from),
            local_time(appointment, appointment.valid_until)
        ),
    });
    if appointment.has_password {
        body.push_str("The meeting has a password; the organiser sends it to you separately.\n");
    }
    if appointment.record {
        body.push_str("The meeting will be recorded.\n");
    }
    if let Some(description) = appointment.description.as_deref().filter(|d| !d.trim().is_empty()) {
        body.push('\n');
        body.push_str(description.trim());
        body.push('\n');
    }
    appointment
        .attendees
        .iter()
        .map(|to| NewMail {
            to: to.clone(),
            subject: subject.clone(),
            body: body.clone(),
            about: Some(format!("appointment:{}", appointment.id)),
        })
        .collect()
}

impl Services {
    /// Writes an invitation to every attendee of an appointment to the outbox,
    /// and returns how many. `updated` marks them as updates of earlier ones.
    pub async fn invite_attendees(
        &self,
        tenant_id: &TenantId,
        appointment_id: &AppointmentId,
        updated: bool,
        actor: &Actor,
    ) -> CoreResult<usize> {
        let appointment = self.get_appointment(tenant_id, appointment_id).await?;
        let tenant = self.get_tenant(tenant_id).await?;
        let organiser = match appointment.owner.as_deref() {
            Some(owner) => match self.get_user(tenant_id, &UserId::from(owner)).await {
                Ok(user) => user.display_name.filter(|n| !n.is_empty()).unwrap_or(user.email),
                Err(_) => tenant.name.clone(),
            },
            None => tenant.name.clone(),
        };
        let mails = invitations(&appointment, &organiser, updated);
        if mails.is_empty() {
            return Ok(0);
        }
        let mut tx = self.db().begin().await?;
        queue(&mut tx, self.sealer(), tenant_id, &mails).await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "appointment.invite",
            "appointment",
            Some(appointment_id),
        )
        .await?;
        tx.commit().await?;
        Ok(mails.len())
    }

    /// The tenant's outbox, newest first.
    pub async fn list_mail(&self, tenant_id: &TenantId, page: &PageRequest) -> CoreResult<Page<Mail>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<MailRow>) = OUTBOX
            .page(self.db(), tenant_id, "created_at desc, id desc", &paging)
            .await?;
        let mails = rows
            .into_iter()
            .map(|r| r.into_claimed(self.sealer()).map(|c| c.mail))
            .collect::<CoreResult<_>>()?;
        Ok(paging.page(total, mails))
    }

    /// Starts an attempt to send the mail `id`: counts it and returns the mail,
    /// or `None` when it is no longer `PENDING` (sent, failed or deleted since its
    /// job was scheduled). Mails of every tenant (the runner is the server's).
    pub async fn start_mail_attempt(&self, id: &str) -> CoreResult<Option<ClaimedMail>> {
        let sql = format!(
            "update mail_outbox set attempts = attempts + 1 where id = $1 and status = 'PENDING' returning {COLUMNS}"
        );
        let row: Option<MailRow> = with_db!(self.writer(), |pool| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.map(|r| r.into_claimed(self.sealer())).transpose()
    }

    /// Gives every `PENDING` mail a job due at its next attempt, unless it has
    /// one that is not parked: what a server with an SMTP server does at start,
    /// so that mail kept while none was configured (or written before mail went
    /// through the job runner) is sent. Returns how many jobs were added or
    /// unparked.
    pub async fn schedule_pending_mail(&self) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        // The job's id is derived from the mail's, so one statement does it all.
        let changed = with_tx!(&mut tx, |conn| sqlx::query(
            "insert into jobs (id, tenant_id, kind, job_key, payload, due_at, created_at) \
             select 'mail_' || id, tenant_id, $1, id, '{}', next_attempt_at, $2 from mail_outbox \
             where status = 'PENDING' \
             on conflict (kind, job_key) do update set due_at = excluded.due_at, lease_until = null, attempts = 0 \
             where jobs.due_at = $3"
        )
        .bind(JobKind::Mail.as_str())
        .bind(now_ms())
        .bind(jobs::PARKED)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(changed)
    }

    /// Makes a mail of the tenant due now: a pending one skips the rest of its
    /// wait, a failed one starts over with fresh attempts. A sent mail is left as
    /// it is (409).
    pub async fn retry_mail_now(&self, tenant_id: &TenantId, id: &str) -> CoreResult<()> {
        let (status,): (String,) = OUTBOX.read(self.db(), tenant_id, id, "status").await?;
        if status == "SENT" {
            return Err(crate::error::CoreError::Conflict {
                field: None,
                code: "already_sent",
                message: "the mail was already sent".into(),
            });
        }
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let changed = with_tx!(&mut tx, |conn| sqlx::query(
            "update mail_outbox set next_attempt_at = $3, status = 'PENDING', \
             attempts = case when status = 'FAILED' then 0 else attempts end \
             where tenant_id = $1 and id = $2 and status <> 'SENT'"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if changed > 0 {
            // Due now, whether its job waited for a retry, was parked, or was
            // dropped when the mail failed.
            jobs::schedule(&mut tx, Some(tenant_id), JobKind::Mail, id, now, &serde_json::json!({})).await?;
        }
        tx.commit().await
    }

    /// Records the end of an attempt started by [`Services::start_mail_attempt`]:
    /// sent, or the error, retried later (the mail's job moves to the retry) until
    /// the attempts are spent and the mail is `FAILED`.
    pub async fn finish_mail(&self, claimed: &ClaimedMail, result: Result<(), String>) -> CoreResult<()> {
        let now = now_ms();
        let (status, next, error, sent_at) = match result {
            Ok(()) => ("SENT", now, None, Some(now)),
            Err(e) => match mail_backoff().after(claimed.mail.attempts) {
                Some(wait) => ("PENDING", now + duration_ms(wait), Some(e), None),
                None => ("FAILED", now, Some(e), None),
            },
        };
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update mail_outbox set status = $2, next_attempt_at = $3, last_error = $4, sent_at = $5 where id = $1"
        )
        .bind(&claimed.mail.id)
        .bind(status)
        .bind(next)
        .bind(error)
        .bind(sent_at)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if status == "PENDING" {
            jobs::schedule(
                &mut tx,
                Some(&claimed.tenant_id),
                JobKind::Mail,
                &claimed.mail.id,
                next,
                &serde_json::json!({}),
            )
            .await?;
        }
        tx.commit().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::appointments::AppointmentPermissions;

    fn appointment() -> Appointment {
        let at = chrono::Utc.with_ymd_and_hms(2026, 12, 1, 14, 0, 0).unwrap();
        Appointment {
            id: "a1".into(),
            title: "Contract review".into(),
            description: Some("Bring the draft.".into()),
            duration_in_minutes: 45,
            date: at,
            timezone_id: "Europe/Berlin".into(),
            record: true,
            owner: None,
            has_password: true,
            attendees: vec!["ada@example.com".into(), "bob@example.com".into()],
            send_invite_email: true,
            customer_id: None,
            valid: true,
            valid_after: Some(2),
            valid_before: Some(1),
            valid_type: ValidType::Hours,
            custom_properties: Default::default(),
            permissions: AppointmentPermissions::default(),
            join_link: "https://rapport.example/join/tok".into(),
            valid_from: at - chrono::Duration::hours(1),
            valid_until: at + chrono::Duration::minutes(45) + chrono::Duration::hours(2),
            created_at: at,
            updated_at: at,
        }
    }

    #[test]
    fn an_invitation_says_when_in_the_appointments_zone_and_how_to_join() {
        let mails = invitations(&appointment(), "Ines", false);
        assert_eq!(mails.len(), 2);
        assert_eq!(mails[1].to, "bob@example.com");
        let mail = &mails[0];
        assert_eq!(mail.subject, "Contract review — Tue 1 Dec 2026, 15:00 (Europe/Berlin)");
        assert!(mail.body.starts_with("Ines invites you"));
        assert!(mail.body.contains("Join: https://rapport.example/join/tok"));
        assert!(mail
            .body
            .contains("from Tue 1 Dec 2026, 14:00 (Europe/Berlin) to Tue 1 Dec 2026, 17:45"));
        assert!(mail.body.contains("password") && mail.body.contains("recorded"));
        assert!(mail.body.ends_with("Bring the draft.\n"));
        assert_eq!(mail.about.as_deref(), Some("appointment:a1"));
        assert!(invitations(&appointment(), "Ines", true)[0]
            .subject
            .starts_with("Updated: "));
    }
}
