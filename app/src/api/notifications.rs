//! The signed-in user's notifications (the bell in the top bar): alerts of
//! watchdogs and SLA rules that name the user as a receiver. Every call reads
//! or changes the caller's own notifications, in the caller's tenant, only.
//! The count follows live through `GET /inbox/events?only=notifications`.

use leptos::prelude::*;
use rapport_core::model::PageInfo;
use serde::{Deserialize, Serialize};

/// Where the notifications are listed.
pub const NOTIFICATIONS_PATH: &str = "/notifications";

/// Notifications per page.
pub const NOTIFICATIONS_PER_PAGE: i64 = 25;

/// A notification as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationView {
    /// Id.
    pub id: String,
    /// What raised it (`JAVASCRIPT_ERROR`, …, `SLA_MISSED`).
    pub kind: String,
    /// One line.
    pub title: String,
    /// What happened.
    pub body: String,
    /// A dashboard path to what it is about.
    pub link: Option<String>,
    /// When it was written (RFC 3339, UTC).
    pub created_at: String,
    /// Whether the user has read it.
    pub read: bool,
}

/// A page of notifications, newest first, with the unread count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotificationsPage {
    /// The notifications on this page.
    pub items: Vec<NotificationView>,
    /// Where the page sits.
    pub page: PageInfo,
    /// How many are unread in all.
    pub unread: i64,
}

/// How many of the user's notifications are unread; 0 when signed out (the
/// top bar asks on every page).
#[server(endpoint = "notification_count")]
pub async fn notification_count() -> Result<i64, ServerFnError> {
    use crate::ssr::{context, optional_user, to_server_error};
    let Some(user) = optional_user().await? else {
        return Ok(0);
    };
    context()?
        .services
        .unread_notifications(&user.tenant_id, &user.id)
        .await
        .map_err(to_server_error)
}

/// One page of the user's notifications.
#[server(endpoint = "list_notifications")]
pub async fn list_notifications(page: Option<i64>) -> Result<NotificationsPage, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    use rapport_core::model::{PageRequest, Role};
    let (ctx, user) = require_role(Role::Agent).await?;
    let listed = ctx
        .services
        .list_notifications(
            &user.tenant_id,
            &user.id,
            &PageRequest {
                page_number: Some(page.unwrap_or(0).max(0)),
                page_size: Some(NOTIFICATIONS_PER_PAGE),
                offset: None,
            },
        )
        .await
        .map_err(to_server_error)?;
    let unread = ctx
        .services
        .unread_notifications(&user.tenant_id, &user.id)
        .await
        .map_err(to_server_error)?;
    Ok(NotificationsPage {
        items: listed
            .results
            .into_iter()
            .map(|n| NotificationView {
                id: n.id,
                kind: n.kind,
                title: n.title,
                body: n.body,
                link: n.link,
                created_at: n.created_at.to_rfc3339(),
                read: n.read_at.is_some(),
            })
            .collect(),
        page: listed.page,
        unread,
    })
}

/// Marks every notification of the user read; returns how many were unread.
#[server(endpoint = "mark_notifications_read")]
pub async fn mark_notifications_read() -> Result<u64, ServerFnError> {
    use crate::ssr::{actor, require_role, to_server_error};
    use rapport_core::{model::Role, notifications::MarkRead};
    let (ctx, user) = require_role(Role::Agent).await?;
    ctx.services
        .mark_notifications_read(&user.tenant_id, &user.id, MarkRead::All, &actor(&user))
        .await
        .map_err(to_server_error)
}
