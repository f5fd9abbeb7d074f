//! Chat transcripts by mail: the conversation as plain text, written to the
//! outbox ([`crate::mail`]) like every mail, so it is sent (or waits for an
//! SMTP server) and shows in the dashboard's outbox.
//!
//! Two ways in:
//! - the visitor asks from the widget, to an address they give; a page is public, so each customer gets at most one
//!   every [`TRANSCRIPT_EVERY_MS`], and every transcript counts against the
//!   workspace's mails per day;
//! - the workspace mails one by itself when a conversation is marked done
//!   (`transcriptOnClose`), to the customer's `email` only: an address the
//!   workspace knows (set by an agent or an integration, or signed by the
//!   website), never one a page merely claimed.

use chrono::TimeZone;
use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::{TenantTable, Tx},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    mail::{self, NewMail},
    time::now_ms,
    validate::{is_email, Checks},
    with_tx, Services,
};

/// How often one customer can have a transcript mailed on request, in ms.
pub const TRANSCRIPT_EVERY_MS: i64 = 10 * 60_000;
/// The newest messages a transcript holds.
const TRANSCRIPT_MESSAGES: i64 = 500;

/// Where to mail the transcript.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"email": "vera@example.com"}))]
pub struct TranscriptIn {
    /// Required: the address to mail it to.
    #[schema(required = true, nullable = false, format = "email", max_length = 254)]
    pub email: Option<String>,
}

/// A transcript written to the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"to": "vera@example.com", "messages": 12}))]
pub struct TranscriptQueued {
    /// The address it goes to.
    pub to: String,
    /// How many messages it holds (the newest 500 at most).
    pub messages: usize,
}

/// One message, as a transcript shows it.
#[derive(sqlx::FromRow)]
struct Line {
    direction: String,
    message: Option<String>,
    url: Option<String>,
    button_link: Option<String>,
    sender_kind: String,
    sender_name: Option<String>,
    created_at: i64,
}

/// The transcript mail of a customer's conversation to `to`.
async fn transcript_mail(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    to: &str,
) -> CoreResult<(NewMail, usize)> {
    let (workspace, zone): (String, String) = with_tx!(tx, |conn| sqlx::query_as(
        "select name, timezone from tenants where id = $1"
    )
    .bind(tenant_id)
    .fetch_one(conn)
    .await)?;
    let mut lines: Vec<Line> = with_tx!(tx, |conn| sqlx::query_as(
        "select m.direction, m.message, m.url, m.button_link, m.sender_kind, u.display_name as sender_name, \
                m.created_at \
         from messages m left join users u on u.tenant_id = m.tenant_id and u.id = m.sender_id \
         where m.tenant_id = $1 and m.customer_id = $2 \
         order by m.created_at desc, m.id desc limit $3"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .bind(TRANSCRIPT_MESSAGES)
    .fetch_all(conn)
    .await)?;
    lines.reverse();
    let zone: chrono_tz::Tz = zone.parse().unwrap_or(chrono_tz::UTC);
    let body = transcript_text(&workspace, zone, &lines);
    let mail = NewMail {
        to: to.to_string(),
        subject: format!("Your conversation with {workspace}"),
        body,
        about: Some(format!("transcript:{customer_id}")),
    };
    Ok((mail, lines.len()))
}

/// A conversation as a transcript's text: a heading, then one line per
/// message, oldest first, with its time in the workspace's `zone`. The visitor
/// is "You"; agents are named by their display name, never their address, and
/// everything else (integrations, automated messages) as the workspace.
fn transcript_text(workspace: &str, zone: chrono_tz::Tz, lines: &[Line]) -> String {
    let mut body = format!("Your conversation with {workspace} (times in {zone}).\n\n");
    for line in lines {
        let at = zone
            .timestamp_millis_opt(line.created_at)
            .single()
            .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default();
        let who = match (line.direction.as_str(), line.sender_kind.as_str()) {
            ("INBOUND", _) => "You",
            (_, "user") => line
                .sender_name
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .unwrap_or(workspace),
            _ => workspace,
        };
        let text = [
            line.message.as_deref(),
            line.url.as_deref(),
            line.button_link.as_deref(),
        ]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
        body.push_str(&format!("[{at}] {who}: {text}\n"));
    }
    if lines.is_empty() {
        body.push_str("There are no messages yet.\n");
    }
    body
}

impl Services {
    /// The visitor asks for their conversation by mail, to `input.email`.
    /// Refused with 429 `transcript_too_soon` within 10 minutes
    /// of the last, and 429 `mail_allowance_spent` when the workspace's mails
    /// of the day are spent; audited as `conversation.transcript`.
    pub async fn mail_transcript(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: &TranscriptIn,
        actor: &Actor,
    ) -> CoreResult<TranscriptQueued> {
        let customers = TenantTable::new("customers", "customer");
        let mut checks = Checks::new();
        let to = checks.email("email", input.email.as_deref());
        checks.finish()?;
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        // One at a time per customer, decided by the write itself, so two
        // requests at once cannot both pass.
        let claimed = with_tx!(&mut tx, |conn| sqlx::query(
            "update customers set transcript_sent_at = $3 where tenant_id = $1 and id = $2 \
             and (transcript_sent_at is null or transcript_sent_at <= $3 - $4)"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .bind(now)
        .bind(TRANSCRIPT_EVERY_MS)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if claimed == 0 {
            let (last,): (Option<i64>,) = customers
                .read_in(&mut tx, tenant_id, customer_id, "transcript_sent_at")
                .await?;
            let wait = last.unwrap_or(now) + TRANSCRIPT_EVERY_MS - now;
            return Err(CoreError::AllowanceSpent {
                code: "transcript_too_soon",
                message: "a transcript of this conversation was mailed less than 10 minutes ago".into(),
                retry_after_secs: u64::try_from((wait + 999) / 1000).unwrap_or(1).max(1),
            });
        }
        let (mail, messages) = transcript_mail(&mut tx, tenant_id, customer_id, &to).await?;
        mail::queue(&mut tx, self.sealer(), tenant_id, &[mail]).await?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "conversation.transcript",
            "customer",
            Some(customer_id),
        )
        .await?;
        tx.commit().await?;
        Ok(TranscriptQueued { to, messages })
    }

    /// In the transaction that marks a conversation done: mails its transcript
    /// to the customer's `email` when the workspace says so
    /// (`transcriptOnClose`). A customer without an address gets none, and
    /// none goes out once the workspace's mails of the day are spent: closing
    /// the conversation matters more than its copy.
    pub(crate) async fn transcript_on_close(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
    ) -> CoreResult<()> {
        let (on, email): (bool, Option<String>) = with_tx!(tx, |conn| sqlx::query_as(
            "select t.transcript_on_close, c.email from customers c join tenants t on t.id = c.tenant_id \
             where c.tenant_id = $1 and c.id = $2"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .fetch_one(conn)
        .await)?;
        let Some(to) = email.filter(|e| on && is_email(e)) else {
            return Ok(());
        };
        let (mail, _) = transcript_mail(tx, tenant_id, customer_id, &to).await?;
        match mail::queue(tx, self.sealer(), tenant_id, &[mail]).await {
            Err(CoreError::AllowanceSpent { .. }) => {
                tracing::warn!(tenant = %tenant_id, "no transcript on close: the workspace's mails of the day are spent");
                Ok(())
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(direction: &str, kind: &str, name: Option<&str>, text: &str, at: i64) -> Line {
        Line {
            direction: direction.into(),
            message: Some(text.into()),
            url: None,
            button_link: None,
            sender_kind: kind.into(),
            sender_name: name.map(str::to_string),
            created_at: at,
        }
    }

    #[test]
    fn a_transcript_names_people_as_the_visitor_knows_them_in_the_workspaces_zone() {
        // 2026-11-28 09:15 UTC is 10:15 in Berlin.
        let at = 1_795_857_300_000;
        let mut card = line("OUTBOUND", "apikey", None, "Track it here", at + 120_000);
        card.button_link = Some("https://shop.example/track".into());
        let lines = [
            line("INBOUND", "customer", None, "Where is my parcel?", at),
            line("OUTBOUND", "user", Some("Ada"), "On its way.", at + 60_000),
            line("OUTBOUND", "user", Some("  "), "Anything else?", at + 90_000),
            card,
        ];
        let text = transcript_text("Tea Shop", chrono_tz::Europe::Berlin, &lines);
        assert_eq!(
            text,
            "Your conversation with Tea Shop (times in Europe/Berlin).\n\n\
             [2026-11-28 10:15] You: Where is my parcel?\n\
             [2026-11-28 10:16] Ada: On its way.\n\
             [2026-11-28 10:16] Tea Shop: Anything else?\n\
             [2026-11-28 10:17] Tea Shop: Track it here https://shop.example/track\n"
        );
        assert!(transcript_text("Tea Shop", chrono_tz::UTC, &[]).ends_with("There are no messages yet.\n"));
    }
}
