//! Replies by mail to visitors who have left. An agent's reply reaches an
//! open chat at once and counts as delivered; one that no page has carried
//! `replyByMailMinutes` after it was sent (default 5, 0: never) finds the
//! visitor gone, and goes by mail to the customer's `email`, or else to the
//! address the visitor gave in the offline form (`reply_to`). So the offline
//! form's address is answered like any other.
//!
//! The mail carries a continue link (`/chat/{token}`): a capability for that
//! one conversation, valid for [`CONTINUE_LINK_DAYS`] days. Its token is kept
//! only as a digest. Opening it shows a page with a button (a mail scanner
//! that follows links spends nothing); the button gives the browser a new
//! visitor token of that customer, and the chat continues where it was.
//!
//! Each reply goes by mail once (`replies_mailed_until`); several replies in a
//! row go in one mail, since each moves the job's due time.

use serde::{Deserialize, Serialize};

use crate::{
    conversations::VisitorIdentity,
    crypto::{random_token, token_digest},
    customers::add_visitor_token,
    db::Tx,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    jobs::{self, JobKind},
    mail::{self, NewMail},
    time::now_ms,
    validate::is_email,
    with_db, with_tx, Services,
};

/// How long a continue link opens its conversation.
pub const CONTINUE_LINK_DAYS: i64 = 7;
const DAY_MS: i64 = 86_400_000;
/// The replies one mail holds at most, the newest.
const REPLIES_PER_MAIL: i64 = 20;

/// A continue link, opened: whose conversation, and what the page shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueLink {
    /// The workspace's name.
    pub workspace: String,
    /// The workspace's widget key, for the page's chat.
    pub widget_key: String,
    /// The workspace's default language (BCP 47), for the page.
    pub language: String,
}

/// In the transaction that sends an agent's reply: the customer's replies go
/// by mail `replyByMailMinutes` from now unless a page carries them first.
/// Moving the one job per customer makes a burst of replies one mail.
pub(crate) async fn schedule_in(tx: &mut Tx, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<()> {
    let (minutes,): (i64,) = with_tx!(tx, |conn| sqlx::query_as(
        "select reply_by_mail_minutes from tenants where id = $1"
    )
    .bind(tenant_id)
    .fetch_one(conn)
    .await)?;
    if minutes <= 0 {
        return Ok(());
    }
    let due = now_ms() + minutes * 60_000;
    jobs::schedule(
        tx,
        Some(tenant_id),
        JobKind::ReplyByMail,
        customer_id,
        due,
        &serde_json::json!({}),
    )
    .await
}

/// In the transaction that stores a visitor's offline form: its address is
/// where replies go when the customer has no `email` of its own.
pub(crate) async fn remember_reply_to(
    tx: &mut Tx,
    tenant_id: &TenantId,
    customer_id: &CustomerId,
    email: &str,
) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "update customers set reply_to = $3 where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(customer_id)
    .bind(email)
    .execute(conn)
    .await
    .map(|_| ()))?;
    Ok(())
}

/// The mail of unseen replies: their text, oldest first, and the link.
fn replies_mail(workspace: &str, to: &str, replies: &[String], link: &str, customer_id: &str) -> NewMail {
    let mut body = format!("{workspace} replied to you:\n\n");
    for reply in replies {
        body.push_str(reply.trim());
        body.push_str("\n\n");
    }
    body.push_str(&format!(
        "Continue the conversation: {link}\nThe link works for {CONTINUE_LINK_DAYS} days. \
         Anyone you forward this mail to can read and write in this conversation.\n"
    ));
    NewMail {
        to: to.to_string(),
        subject: format!("{workspace} replied to you"),
        body,
        about: Some(format!("reply:{customer_id}")),
    }
}

/// Whom unseen replies go to: the workspace's name, the customer's `email`,
/// the offline form's address, and how far replies went by mail already.
type Recipient = (String, Option<String>, Option<String>, Option<i64>);

impl Services {
    /// The job of [`JobKind::ReplyByMail`]: mails the customer's replies that
    /// no page has carried since they were sent, if the customer has an
    /// address. Once the workspace's mails of the day are spent, they wait in
    /// the conversation.
    pub async fn mail_unseen_replies(&self, tenant_id: &TenantId, customer_id: &CustomerId) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let row: Option<Recipient> = with_tx!(&mut tx, |conn| {
            sqlx::query_as(
                "select t.name, c.email, c.reply_to, c.replies_mailed_until from customers c \
                 join tenants t on t.id = c.tenant_id where c.tenant_id = $1 and c.id = $2",
            )
            .bind(tenant_id)
            .bind(customer_id)
            .fetch_optional(conn)
            .await
        })?;
        // Deleted meanwhile: nothing to send.
        let Some((workspace, email, reply_to, mailed_until)) = row else {
            return Ok(());
        };
        let Some(to) = email.into_iter().chain(reply_to).find(|e| is_email(e)) else {
            return Ok(());
        };
        let mut replies: Vec<(Option<String>, Option<String>, i64)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select message, url, created_at from messages where tenant_id = $1 and customer_id = $2 \
             and direction = 'OUTBOUND' and delivered_at is null and sender_kind in ('user', 'apikey') \
             and created_at > $3 order by created_at desc, id desc limit $4"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .bind(mailed_until.unwrap_or(0))
        .bind(REPLIES_PER_MAIL)
        .fetch_all(conn)
        .await)?;
        let Some(newest) = replies.first().map(|r| r.2) else {
            return Ok(());
        };
        replies.reverse();
        let texts: Vec<String> = replies
            .into_iter()
            .map(|(message, url, _)| [message, url].into_iter().flatten().collect::<Vec<_>>().join(" "))
            .collect();
        let token = random_token(32);
        let now = now_ms();
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into continue_links (id, tenant_id, customer_id, token_digest, created_at, expires_at) \
             values ($1, $2, $3, $4, $5, $6)"
        )
        .bind(uuid::Uuid::now_v7().to_string())
        .bind(tenant_id)
        .bind(customer_id)
        .bind(token_digest(&token))
        .bind(now)
        .bind(now + CONTINUE_LINK_DAYS * DAY_MS)
        .execute(conn)
        .await
        .map(|_| ()))?;
        let link = format!("{}/chat/{token}", self.public_url());
        let mail = replies_mail(&workspace, &to, &texts, &link, customer_id);
        match mail::queue(&mut tx, self.sealer(), tenant_id, &[mail]).await {
            Err(CoreError::AllowanceSpent { .. }) => {
                tracing::warn!(tenant = %tenant_id, "no reply by mail: the workspace's mails of the day are spent");
                return Ok(());
            }
            other => other?,
        }
        with_tx!(&mut tx, |conn| sqlx::query(
            "update customers set replies_mailed_until = $3 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .bind(newest)
        .execute(conn)
        .await
        .map(|_| ()))?;
        tx.commit().await
    }

    /// The conversation a continue link opens, while it is valid; `NotFound`
    /// for an unknown, expired or deleted one (alike).
    pub async fn continue_link(&self, token: &str) -> CoreResult<ContinueLink> {
        self.continue_link_row(token).await.map(|(link, ..)| link)
    }

    async fn continue_link_row(&self, token: &str) -> CoreResult<(ContinueLink, TenantId, CustomerId)> {
        let row: Option<(String, String, String, TenantId, CustomerId)> = with_db!(self.db(), |pool| {
            sqlx::query_as(
            "select t.name, coalesce(t.widget_key, ''), t.language, l.tenant_id, l.customer_id from continue_links l \
             join tenants t on t.id = l.tenant_id where l.token_digest = $1 and l.expires_at > $2"
        )
        .bind(token_digest(token))
        .bind(now_ms())
        .fetch_optional(pool)
        .await
        })?;
        let (workspace, widget_key, language, tenant_id, customer_id) = row.ok_or(CoreError::NotFound("link"))?;
        Ok((
            ContinueLink {
                workspace,
                widget_key,
                language,
            },
            tenant_id,
            customer_id,
        ))
    }

    /// Follows a continue link: a new visitor token of the link's customer,
    /// for the browser that pressed its button.
    pub async fn continue_conversation(&self, token: &str) -> CoreResult<(ContinueLink, VisitorIdentity)> {
        let (link, tenant_id, customer_id) = self.continue_link_row(token).await?;
        let visitor_token = format!("vt_{}", random_token(32));
        // Each press starts a visitor: a forwarded or leaked link spends the
        // workspace's visitors per minute like any page.
        let mut tx = self.db().begin().await?;
        crate::limits::spend_visitor(&mut tx, &tenant_id, now_ms()).await?;
        add_visitor_token(&mut tx, &tenant_id, &customer_id, &token_digest(&visitor_token)).await?;
        tx.commit().await?;
        Ok((
            link,
            VisitorIdentity {
                customer_id,
                visitor_token,
            },
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_mail_holds_the_replies_and_says_what_the_link_grants() {
        let mail = replies_mail(
            "Tea Shop",
            "vera@example.com",
            &["It ships today.".into(), " Anything else? ".into()],
            "https://rapport.example/chat/abc",
            "c1",
        );
        assert_eq!(mail.subject, "Tea Shop replied to you");
        assert_eq!(mail.about.as_deref(), Some("reply:c1"));
        assert!(mail
            .body
            .starts_with("Tea Shop replied to you:\n\nIt ships today.\n\nAnything else?\n\n"));
        assert!(mail
            .body
            .contains("Continue the conversation: https://rapport.example/chat/abc"));
        assert!(mail.body.contains("Anyone you forward this mail to"));
    }
}
