//! A user's notifications: the alerts of watchdogs and SLA rules that name the
//! user as a `USER` receiver (written by `engine::alerts`), shown under the
//! dashboard's bell with an unread count that follows live
//! ([`crate::live::LiveEvent::Notification`]).
//!
//! Every read and write takes the tenant and the user: a user sees only their
//! own notifications, and never another tenant's.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::{keyed_page, placeholders},
    error::CoreResult,
    ids::{TenantId, UserId},
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Notification {
    /// Id.
    pub id: String,
    /// What raised it: a watchdog type (`JAVASCRIPT_ERROR`, …) or `SLA_MISSED`.
    pub kind: String,
    /// One line.
    pub title: String,
    /// What happened.
    pub body: String,
    /// A dashboard path to what it is about.
    pub link: Option<String>,
    /// When it was written.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When the user marked it read; null while unread.
    pub read_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Which notifications to mark read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MarkRead<'a> {
    /// These, by id (others' ids are ignored).
    Ids(&'a [String]),
    /// Every unread one.
    All,
}

#[derive(sqlx::FromRow)]
struct NotificationRow {
    id: String,
    kind: String,
    title: String,
    body: String,
    link: Option<String>,
    created_at: i64,
    read_at: Option<i64>,
}

impl From<NotificationRow> for Notification {
    fn from(r: NotificationRow) -> Self {
        Notification {
            id: r.id,
            kind: r.kind,
            title: r.title,
            body: r.body,
            link: r.link,
            created_at: from_ms(r.created_at),
            read_at: r.read_at.map(from_ms),
        }
    }
}

impl Services {
    /// A page of the user's notifications, newest first.
    pub async fn list_notifications(
        &self,
        tenant_id: &TenantId,
        user_id: &UserId,
        page: &PageRequest,
    ) -> CoreResult<Page<Notification>> {
        let paging = Paging::from_request(page)?;
        let (total, rows): (i64, Vec<NotificationRow>) = keyed_page(
            self.db(),
            "select count(*) from notifications where tenant_id = $1 and user_id = $2",
            "select id, kind, title, body, link, created_at, read_at from notifications \
             where tenant_id = $1 and user_id = $2 order by created_at desc, id desc limit $3 offset $4",
            tenant_id,
            user_id,
            &paging,
        )
        .await?;
        Ok(paging.page(total, rows.into_iter().map(Notification::from).collect()))
    }

    /// How many of the user's notifications are unread.
    pub async fn unread_notifications(&self, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<i64> {
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(
            "select count(*) from notifications where tenant_id = $1 and user_id = $2 and read_at is null"
        )
        .bind(tenant_id)
        .bind(user_id)
        .fetch_one(pool)
        .await)?)
    }

    /// Marks the user's notifications read (audited as `notification.read`).
    /// Returns how many changed.
    pub async fn mark_notifications_read(
        &self,
        tenant_id: &TenantId,
        user_id: &UserId,
        which: MarkRead<'_>,
        actor: &Actor,
    ) -> CoreResult<u64> {
        let now = now_ms();
        let base = "update notifications set read_at = $3 where tenant_id = $1 and user_id = $2 and read_at is null";
        let sql = match which {
            MarkRead::All => base.to_string(),
            MarkRead::Ids([]) => return Ok(0),
            MarkRead::Ids(ids) => format!("{base} and id in ({})", placeholders(4, ids.len())),
        };
        let mut tx = self.db().begin().await?;
        let changed = with_tx!(&mut tx, |conn| {
            let mut q = sqlx::query(&sql).bind(tenant_id).bind(user_id).bind(now);
            if let MarkRead::Ids(ids) = which {
                for id in ids {
                    q = q.bind(id);
                }
            }
            q.execute(conn).await.map(|r| r.rows_affected())
        })?;
        if changed > 0 {
            audit::record(
                &mut tx,
                Some(tenant_id),
                actor,
                "notification.read",
                "user",
                Some(user_id),
            )
            .await?;
        }
        tx.commit().await?;
        Ok(changed)
    }
}
