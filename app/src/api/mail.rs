//! The mail outbox, from the dashboard (admins): every mail Rapport wrote, with
//! whether it was sent. Without an SMTP server this is where mail is read.

use leptos::prelude::*;
use rapport_core::model::PageInfo;
use serde::{Deserialize, Serialize};

/// Where the outbox is read.
pub const OUTBOX_PATH: &str = "/settings/outbox";

/// Mails per page.
pub const MAILS_PER_PAGE: i64 = 25;

/// A mail as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MailView {
    /// Id.
    pub id: String,
    /// Recipient.
    pub to: String,
    /// Subject.
    pub subject: String,
    /// Plain-text body.
    pub body: String,
    /// `PENDING`, `SENT` or `FAILED`.
    pub status: String,
    /// Attempts so far.
    pub attempts: i64,
    /// Why the last attempt failed.
    pub last_error: Option<String>,
    /// When it was written (RFC 3339, UTC).
    pub created_at: String,
    /// When it was sent (RFC 3339, UTC).
    pub sent_at: Option<String>,
}

/// A page of the outbox, and how mail leaves: `SMTP`, or `KEPT` here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outbox {
    /// `SMTP` when an SMTP server is configured, else `KEPT`.
    pub delivery: String,
    /// The mails on this page, newest first.
    pub mails: Vec<MailView>,
    /// Where the page sits.
    pub page: PageInfo,
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// One page of the tenant's outbox.
#[server(endpoint = "list_outbox")]
pub async fn list_outbox(page: Option<i64>) -> Result<Outbox, ServerFnError> {
    use rapport_core::model::PageRequest;
    let (ctx, user) = admin().await?;
    let listed = ctx
        .services
        .list_mail(
            &user.tenant_id,
            &PageRequest {
                page_number: Some(page.unwrap_or(0).max(0)),
                page_size: Some(MAILS_PER_PAGE),
                offset: None,
            },
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(Outbox {
        delivery: if ctx.smtp_configured { "SMTP" } else { "KEPT" }.into(),
        mails: listed
            .results
            .into_iter()
            .map(|m| MailView {
                id: m.id,
                to: m.to,
                subject: m.subject,
                body: m.body,
                status: m.status,
                attempts: m.attempts,
                last_error: m.last_error,
                created_at: m.created_at.to_rfc3339(),
                sent_at: m.sent_at.map(|t| t.to_rfc3339()),
            })
            .collect(),
        page: listed.page,
    })
}

/// Sends a pending or failed mail at the next round of the mail worker.
#[server(endpoint = "retry_mail")]
pub async fn retry_mail(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .retry_mail_now(&user.tenant_id, &id)
        .await
        .map_err(crate::ssr::to_server_error)
}
