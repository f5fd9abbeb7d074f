//! Alerts: what a watchdog or an SLA rule sends to its receivers.
//!
//! [`deliver`] is called in the transaction of whatever raised the alert, and
//! only queues it there: one durable job ([`JobKind::Alert`]), which the job runner
//! runs a moment later (within its poll interval, 200 ms). That job writes, in
//! one transaction of its own:
//! - `EMAIL`: a mail in the outbox ([`crate::mail`]), which the runner sends over
//!   SMTP (or keeps in the outbox without one);
//! - `USER`: a row of `notifications` for that user, when the user still exists
//!   in the tenant (a deleted user's receiver is skipped silently), and after the
//!   commit a [`LiveEvent::Notification`] to that user's dashboards, on every
//!   instance (a `NOTIFY` on PostgreSQL, see [`crate::live`]);
//! - `WEBHOOK`: one event, `watchdog.alert` or `sla.missed`, that the webhook
//!   engine POSTs to each receiver URL: signed per Standard Webhooks with the
//!   tenant's alert secret, retried, held by the circuit, checked by the SSRF
//!   guard and logged, through an internal endpoint per URL ([`receivers`]).
//!
//! Why a job rather than the writes themselves: the paths that raise alerts run
//! often (every customer message), and this way they add one row and nothing
//! else; and the job owns its transaction, so it can tell live screens after
//! its commit, which a caller's transaction could not. The job deletes its own
//! row in that transaction, so an alert is written once even when the runner
//! dies between the commit and marking the job done.

mod receivers;

use chrono::TimeZone;
use serde::{Deserialize, Serialize};

pub use receivers::AlertReceiverState;

use crate::{
    audit::Actor,
    config::watchdogs::{ReceiverType, WatchdogReceiver},
    db::Tx,
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{CustomerId, TenantId, UserId},
    jobs::{self, Job, JobKind},
    live::LiveEvent,
    mail::{self, NewMail},
    time::{from_ms, now_ms},
    with_tx, Services,
};

/// [`Alert::kind`] of a missed SLA; its webhook event is `sla.missed`.
pub const SLA_MISSED: &str = "SLA_MISSED";

/// One alert, as its receivers get it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Alert {
    /// What raised it: a watchdog type (`JAVASCRIPT_ERROR`, …) or [`SLA_MISSED`].
    pub kind: String,
    /// One line: the mail's subject, the notification's title.
    pub title: String,
    /// What happened.
    pub body: String,
    /// Where to look, as a dashboard path (`/inbox/<customer>`); mail and webhooks
    /// get it as an absolute URL.
    pub link: Option<String>,
    /// How many events it reports (1, or a window's summary count).
    pub count: i64,
    /// When it was raised (unix ms).
    pub at: i64,
}

impl Alert {
    /// An alert about one event, raised now.
    pub fn new(kind: &str, title: impl Into<String>, body: impl Into<String>, link: Option<String>) -> Alert {
        Alert {
            kind: kind.to_string(),
            title: title.into(),
            body: body.into(),
            link,
            count: 1,
            at: now_ms(),
        }
    }

    /// The webhook event it is delivered as.
    pub fn event_type(&self) -> EventType {
        if self.kind == SLA_MISSED {
            EventType::SlaMissed
        } else {
            EventType::WatchdogAlert
        }
    }
}

/// The body of a `watchdog.alert` or `sla.missed` webhook delivery.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AlertPayload {
    /// `watchdog.alert` or `sla.missed` (also the `rapport-event-type` header).
    #[serde(rename = "type")]
    pub event_type: String,
    /// The watchdog type, or `SLA_MISSED`.
    pub kind: String,
    /// One line.
    pub title: String,
    /// What happened.
    pub body: String,
    /// An absolute link to the dashboard, if any.
    pub link: Option<String>,
    /// How many events it reports.
    pub count: i64,
    /// When it was raised (RFC 3339, UTC).
    pub at: chrono::DateTime<chrono::Utc>,
    /// The same instant in the tenant's time zone, as people read it.
    pub local_time: String,
    /// The tenant's IANA time zone.
    pub timezone: String,
}

/// What a job carries: the receivers and the alert.
#[derive(Debug, Serialize, Deserialize)]
struct AlertJob {
    receivers: Vec<WatchdogReceiver>,
    alert: Alert,
}

/// Queues `alert` to `receivers` in `tx`: it is sent exactly when `tx` commits
/// (see the module doc). Nothing happens without receivers.
pub(crate) async fn deliver(
    tx: &mut Tx,
    tenant_id: &TenantId,
    receivers: &[WatchdogReceiver],
    alert: &Alert,
) -> CoreResult<()> {
    if receivers.is_empty() {
        return Ok(());
    }
    let payload = serde_json::to_value(AlertJob {
        receivers: receivers.to_vec(),
        alert: alert.clone(),
    })
    .map_err(|e| CoreError::Internal(format!("alert payload: {e}")))?;
    let key = format!("{tenant_id}:{}", uuid::Uuid::now_v7().simple());
    jobs::schedule(tx, Some(tenant_id), JobKind::Alert, &key, now_ms(), &payload).await
}

/// Deletes the row of `job`'s claim in `tx`, so that what `tx` writes happens
/// once: a run that finds it gone (an earlier run committed) does nothing.
/// Returns whether it was there.
pub(crate) async fn consume_job(tx: &mut Tx, job: &Job) -> CoreResult<bool> {
    let deleted = with_tx!(tx, |conn| sqlx::query(
        "delete from jobs where id = $1 and due_at = $2 and attempts = $3 and lease_until is not null"
    )
    .bind(&job.id)
    .bind(job.due_at)
    // `Job::attempts` counts the runs before this one; the row counts this one.
    .bind(job.attempts + 1)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(deleted > 0)
}

/// Who was notified in the dashboard by an alert's transaction: told live once
/// it commits.
#[derive(Debug, Default)]
pub(crate) struct Notified {
    users: Vec<String>,
    webhooks: bool,
}

impl Services {
    /// Runs an [`JobKind::Alert`]: writes the alert for each receiver, once.
    pub(crate) async fn run_alert_job(&self, job: &Job) -> CoreResult<()> {
        let tenant_id = job
            .tenant_id
            .clone()
            .ok_or_else(|| CoreError::Internal("an alert job without a tenant".into()))?;
        let AlertJob { receivers, alert } = serde_json::from_value(job.payload.clone())
            .map_err(|e| CoreError::Internal(format!("unreadable alert job: {e}")))?;
        let mut tx = self.db().begin().await?;
        if !consume_job(&mut tx, job).await? {
            return Ok(());
        }
        let notified = self.write_alert(&mut tx, &tenant_id, &receivers, &alert).await?;
        self.commit_alerts(tx, &tenant_id, notified).await
    }

    /// Writes `alert` for each receiver in `tx` (mail, notification, webhook
    /// delivery). The caller commits with [`Services::commit_alerts`].
    pub(crate) async fn write_alert(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        receivers: &[WatchdogReceiver],
        alert: &Alert,
    ) -> CoreResult<Notified> {
        let zone = tenant_zone(tx, tenant_id).await?;
        let local_time = local_time(&zone, alert.at);
        let link = alert.link.as_deref().map(|l| self.absolute(l));
        let mut notified = Notified::default();
        let mut urls: Vec<&str> = Vec::new();
        let mut mails: Vec<NewMail> = Vec::new();
        for receiver in receivers {
            match receiver.kind {
                ReceiverType::Email => mails.push(NewMail {
                    to: receiver.value.clone(),
                    subject: alert.title.clone(),
                    body: mail_body(alert, &local_time, link.as_deref()),
                    about: Some(format!("alert:{}", alert.kind)),
                }),
                ReceiverType::User => {
                    if notify_user(tx, tenant_id, &UserId::from(receiver.value.as_str()), alert).await? {
                        notified.users.push(receiver.value.clone());
                    }
                }
                ReceiverType::Webhook if !urls.contains(&receiver.value.as_str()) => urls.push(&receiver.value),
                ReceiverType::Webhook => {}
            }
        }
        match mail::queue(tx, self.sealer(), tenant_id, &mails).await {
            // The alert still reaches its users and webhooks; only its mails
            // wait for the tenant's next day.
            Err(CoreError::AllowanceSpent { .. }) => {
                tracing::warn!(%tenant_id, alert = %alert.kind, "alert mails over the workspace's daily allowance: not sent");
            }
            other => other?,
        }
        let mut endpoints = Vec::new();
        for url in urls {
            if let Some(id) = receivers::endpoint_for(tx, self.sealer(), tenant_id, url).await? {
                endpoints.push(id);
            }
        }
        if !endpoints.is_empty() {
            let event_type = alert.event_type();
            let payload = AlertPayload {
                event_type: event_type.as_str().to_string(),
                kind: alert.kind.clone(),
                title: alert.title.clone(),
                body: alert.body.clone(),
                link,
                count: alert.count,
                at: from_ms(alert.at),
                local_time,
                timezone: zone.name().to_string(),
            };
            let body =
                serde_json::to_string(&payload).map_err(|e| CoreError::Internal(format!("alert payload: {e}")))?;
            events::deliver_to(
                tx,
                tenant_id,
                &Actor::system("alerts"),
                event_type,
                None,
                &body,
                &endpoints,
            )
            .await?;
            notified.webhooks = true;
        }
        Ok(notified)
    }

    /// Commits an alert's transaction and tells live screens: the notified
    /// users' dashboards (on every instance) and the webhook worker.
    pub(crate) async fn commit_alerts(&self, mut tx: Tx, tenant_id: &TenantId, notified: Notified) -> CoreResult<()> {
        let events: Vec<LiveEvent> = notified
            .users
            .iter()
            .map(|user_id| LiveEvent::Notification {
                user_id: UserId::from(user_id.as_str()),
            })
            .collect();
        for event in &events {
            self.announce_live(&mut tx, tenant_id, &CustomerId::default(), event)
                .await?;
        }
        tx.commit().await?;
        for event in events {
            self.after_commit(tenant_id, &CustomerId::default(), event);
        }
        if notified.webhooks {
            self.wake_outbox();
        }
        Ok(())
    }

    /// A dashboard path as an absolute URL (`/inbox/x` → `https://host/inbox/x`).
    fn absolute(&self, link: &str) -> String {
        if link.starts_with('/') {
            format!("{}{link}", self.public_url())
        } else {
            link.to_string()
        }
    }
}

/// Writes a notification for `user_id` unless no such user is left in the
/// tenant. Returns whether it was written.
pub(crate) async fn notify_user(
    tx: &mut Tx,
    tenant_id: &TenantId,
    user_id: &UserId,
    alert: &Alert,
) -> CoreResult<bool> {
    let written = with_tx!(tx, |conn| sqlx::query(
        "insert into notifications (id, tenant_id, user_id, kind, title, body, link, created_at) \
         select $1, $2, $3, $4, $5, $6, $7, $8 where exists (select 1 from users where tenant_id = $2 and id = $3)"
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(tenant_id)
    .bind(user_id)
    .bind(&alert.kind)
    .bind(&alert.title)
    .bind(&alert.body)
    .bind(&alert.link)
    .bind(alert.at)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(written > 0)
}

/// The tenant's time zone (UTC when unknown).
async fn tenant_zone(tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<chrono_tz::Tz> {
    let zone: Option<String> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select timezone from tenants where id = $1"
    )
    .bind(tenant_id)
    .fetch_optional(conn)
    .await)?;
    Ok(zone.and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC))
}

/// `Tue 1 Dec 2026, 15:00 (Europe/Berlin)`.
fn local_time(zone: &chrono_tz::Tz, at: i64) -> String {
    format!(
        "{} ({})",
        zone.from_utc_datetime(&from_ms(at).naive_utc())
            .format("%a %-d %b %Y, %H:%M"),
        zone.name()
    )
}

/// The text of an alert mail.
fn mail_body(alert: &Alert, local_time: &str, link: Option<&str>) -> String {
    let mut text = format!("{}\n\n", alert.body);
    if alert.count > 1 {
        text.push_str(&format!("Events: {}\n", alert.count));
    }
    text.push_str(&format!("When: {local_time}\n"));
    if let Some(link) = link {
        text.push_str(&format!("Open: {link}\n"));
    }
    text.push_str("\nRapport sent this to the receivers of the watchdog or SLA rule that raised it.\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sla_misses_go_out_as_their_own_event() {
        assert_eq!(
            Alert::new(SLA_MISSED, "t", "b", None).event_type(),
            EventType::SlaMissed
        );
        assert_eq!(
            Alert::new("JAVASCRIPT_ERROR", "t", "b", None).event_type(),
            EventType::WatchdogAlert
        );
    }

    #[test]
    fn local_time_is_the_tenants() {
        // 2026-03-29 01:30 UTC is 03:30 in Berlin, after the switch to summer time.
        let at = chrono::Utc
            .with_ymd_and_hms(2026, 3, 29, 1, 30, 0)
            .unwrap()
            .timestamp_millis();
        assert_eq!(
            local_time(&chrono_tz::Europe::Berlin, at),
            "Sun 29 Mar 2026, 03:30 (Europe/Berlin)"
        );
    }

    #[test]
    fn a_summary_mail_says_how_many() {
        let mut alert = Alert::new("JAVASCRIPT_ERROR", "Errors", "and 41 more", Some("/x".into()));
        alert.count = 41;
        let body = mail_body(&alert, "Sun 29 Mar 2026, 03:30 (UTC)", Some("https://r.example/x"));
        assert!(body.contains("Events: 41"), "{body}");
        assert!(body.contains("Open: https://r.example/x"), "{body}");
    }
}
