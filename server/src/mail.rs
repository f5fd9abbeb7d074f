//! The mail worker: sends the outbox (see `rapport_core::mail`) through the
//! configured SMTP server with lettre.
//!
//! It claims due mails every few seconds, sends each, and records the outcome:
//! sent, or retried on a growing schedule until the attempts are spent. Without
//! `RAPPORT_SMTP_URL` it does not run, and mail stays in the outbox for admins to
//! read. Recipients' addresses are not logged, only mail ids.

use std::time::Duration;

use anyhow::Context;
use lettre::{
    message::{header::ContentType, Mailbox},
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
};
use rapport_core::{mail::ClaimedMail, Services};
use tokio::sync::watch;

/// How often the worker looks for mail to send.
const POLL: Duration = Duration::from_secs(2);
/// Most mails claimed at once.
const CLAIM_BATCH: i64 = 32;
/// How long a claimed mail stays reserved (above lettre's own 60 s timeout).
const LEASE_MS: i64 = 120_000;

/// Where mail goes and who it is from.
#[derive(Clone)]
pub struct MailSettings {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl MailSettings {
    /// Reads the SMTP URL and the `From`; `None` without an SMTP URL.
    pub fn from_config(config: &crate::config::MailArgs) -> anyhow::Result<Option<MailSettings>> {
        let Some(url) = config.smtp_url.as_deref().filter(|u| !u.trim().is_empty()) else {
            return Ok(None);
        };
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url.trim())
            .context("RAPPORT_SMTP_URL is not a usable SMTP URL")?
            .build();
        let from = config
            .from
            .parse()
            .with_context(|| format!("RAPPORT_MAIL_FROM {:?} is not a mailbox", config.from))?;
        Ok(Some(MailSettings { transport, from }))
    }
}

/// Sends one mail.
async fn send(settings: &MailSettings, claimed: &ClaimedMail) -> Result<(), String> {
    let to: Mailbox = claimed
        .mail
        .to
        .parse()
        .map_err(|e| format!("the recipient is not a mailbox: {e}"))?;
    let message = Message::builder()
        .from(settings.from.clone())
        .to(to)
        .subject(claimed.mail.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(claimed.mail.body.clone())
        .map_err(|e| format!("the mail cannot be built: {e}"))?;
    settings
        .transport
        .send(message)
        .await
        .map(|_| ())
        .map_err(|e| format!("the SMTP server refused or failed: {e}"))
}

/// One round: claims due mails and sends them one after the other. Returns how
/// many were claimed.
pub async fn run_once(services: &Services, settings: &MailSettings) -> usize {
    let claimed = match services.claim_mail(CLAIM_BATCH, LEASE_MS).await {
        Ok(claimed) => claimed,
        Err(err) => {
            tracing::warn!(error = %err, "claiming mail failed");
            return 0;
        }
    };
    for mail in &claimed {
        let result = send(settings, mail).await;
        if let Err(error) = &result {
            tracing::warn!(mail_id = %mail.mail.id, attempt = mail.mail.attempts, %error, "sending mail failed");
        }
        if let Err(err) = services.finish_mail(&mail.mail.id, mail.mail.attempts, result).await {
            tracing::warn!(mail_id = %mail.mail.id, error = %err, "recording a mail's outcome failed");
        }
    }
    claimed.len()
}

/// Starts the worker; it ends when `shutdown` turns true.
pub fn spawn(
    services: Services,
    settings: MailSettings,
    mut shutdown: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            // A full batch means more may be waiting: go again at once.
            if run_once(&services, &settings).await as i64 == CLAIM_BATCH {
                continue;
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = shutdown.changed() => {}
            }
            if *shutdown.borrow() {
                break;
            }
        }
    })
}
