//! `/notifications` (every user): the alerts of watchdogs and SLA rules that
//! name the signed-in user as a receiver, newest first, each with what
//! happened, when, and a link to it; unread ones stand out, and "Mark all as
//! read" clears the bell's count. The bell in the top bar links here.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::notifications::{list_notifications, MarkNotificationsRead, NotificationsPage, NOTIFICATIONS_PATH},
    components::{
        feedback::{ActionError, ErrorNote},
        layout::{agents, utc_time, BellTick, Guard},
        lists::Pager,
    },
};

/// `/notifications`.
#[component]
pub fn NotificationsPage() -> impl IntoView {
    let mark = FormAction::<MarkNotificationsRead>::new();
    let query = use_query_map();
    let page = move || {
        query
            .with(|q| q.get("page"))
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let listed = Resource::new(
        move || (page(), mark.version().get()),
        |(page, _)| list_notifications(Some(page)),
    );
    // Marked read: the bell's count follows.
    if let Some(tick) = use_context::<BellTick>() {
        Effect::new(move |_| {
            if mark.version().get() > 0 {
                tick.bump();
            }
        });
    }
    view! {
        <Title text="Notifications" />
        <Guard allowed=agents>
            <h1>"Notifications"</h1>
            <p class="lead">"Alerts of the watchdogs and SLA rules that name you as a receiver."</p>
            <ActionError value=mark.value() />
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading notifications…"</p> }>
                {move || Suspend::new(async move {
                    match listed.await {
                        Ok(listed) => view! { <NotificationList listed mark /> }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

#[component]
fn NotificationList(listed: NotificationsPage, mark: FormAction<MarkNotificationsRead>) -> impl IntoView {
    if listed.items.is_empty() {
        return view! {
            <p class="empty">"No notifications. Watchdogs and SLA rules that name you as a receiver send them here."</p>
        }
        .erase();
    }
    let info = listed.page.clone();
    let unread = listed.unread;
    view! {
        <div class="toolbar">
            <p>{match unread {
                0 => "Everything is read.".to_string(),
                1 => "1 unread notification.".to_string(),
                n => format!("{n} unread notifications."),
            }}</p>
            {(unread > 0).then(|| view! {
                <PostForm action=mark>
                    <button type="submit" class="button secondary" disabled=move || mark.pending().get()>"Mark all as read"</button>
                </PostForm>
            })}
        </div>
        <ul class="notification-list">
            {listed.items.into_iter().map(|n| {
                let class = if n.read { "card notification" } else { "card notification unread" };
                let title = match &n.link {
                    Some(link) => view! { <a href=link.clone()>{n.title.clone()}</a> }.erase(),
                    None => view! { <span>{n.title.clone()}</span> }.erase(),
                };
                view! {
                    <li class=class>
                        <h2 class="notification-title">
                            {(!n.read).then(|| view! { <span class="visually-hidden">"Unread: "</span> })}
                            {title}
                        </h2>
                        <p class="notification-body">{n.body.clone()}</p>
                        <p class="meta"><time datetime=n.created_at.clone()>{utc_time(&n.created_at, false)}</time></p>
                    </li>
                }
            }).collect_view()}
        </ul>
        <Pager info noun="notifications" words=("Newer", "Older") href=|page| format!("{NOTIFICATIONS_PATH}?page={page}") label="Pages of notifications" />
    }
    .erase()
}
