//! Sending mail: the job runner's handler for `JobKind::Mail` jobs (one per mail
//! of the outbox, see `rapport_core::mail`), through the configured SMTP server
//! with lettre.
//!
//! A run starts an attempt (counted on the mail), sends, and records the
//! outcome: sent, or retried on the mail's growing schedule (its job moves to the
//! retry), or failed once the attempts are spent. Without `RAPPORT_SMTP_URL` the
//! job is parked, no attempt is counted, and the mail stays in the outbox for
//! admins to read; a server started with SMTP sends it. Recipients' addresses are
//! not logged, only mail ids.

use std::time::Duration;

use anyhow::Context;
use lettre::{
    message::{header::ContentType, Mailbox},
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
};
use rapport_core::{
    error::CoreResult,
    jobs::{Job, PARKED},
    mail::ClaimedMail,
    Services,
};

/// How long one SMTP exchange may take.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

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
            // Well within the job runner's lease, so a hanging server never lets
            // another run of the same mail start beside this one.
            .timeout(Some(SMTP_TIMEOUT))
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

/// Runs the mail job `job` (its key is the mail id): sends the mail with
/// `settings`, or parks the job when there are none.
pub async fn deliver(services: &Services, settings: Option<&MailSettings>, job: &Job) -> CoreResult<()> {
    let Some(settings) = settings else {
        // Kept in the outbox; a start with SMTP unparks it.
        services.defer_job(job, PARKED).await?;
        return Ok(());
    };
    // Sent, failed for good or deleted since: nothing to do.
    let Some(claimed) = services.start_mail_attempt(&job.key).await? else {
        return Ok(());
    };
    let result = send(settings, &claimed).await;
    if let Err(error) = &result {
        tracing::warn!(mail_id = %claimed.mail.id, attempt = claimed.mail.attempts, %error, "sending mail failed");
    }
    services.finish_mail(&claimed, result).await
}
