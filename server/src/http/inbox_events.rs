//! `GET /inbox/events`: the agents' inbox hears what changed in its tenant as
//! server-sent events, so lists and threads update without a reload; and every
//! dashboard page hears the signed-in user's new notifications (the bell).
//!
//! Events carry only which conversation changed (`{"customerId": …}`); the page
//! then reads it through its server functions, which check the role again.
//! Event names: `message` (a message stored, either way), `conversation` (a
//! status change), `assigned`, `notification` (a notification for this user,
//! and for no one else: `{}`; the page asks for its unread count), `typing`
//! (`{"customerId", "by": "VISITOR"|"AGENT", "userId", "name", "draft",
//! "typing"}`: someone types in a conversation, the visitor's draft where the
//! workspace shows drafts; never this user's own), `read` (`{"customerId",
//! "by", "upTo"}`: a side has read up to that message time, in ms), and `resync`
//! when this subscriber fell behind and lost events (or changes made through
//! another instance may have been missed, see `rapport_core::live`), so the page
//! reloads everything it shows.
//!
//! `?only=notifications` leaves out the conversation events: the bell on pages
//! other than the inbox needs nothing else.

use std::convert::Infallible;

use axum::{
    extract::{Query, State},
    http::HeaderMap,
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
};
use futures_util::StreamExt;
use rapport_core::{
    live::{LiveEvent, Room},
    model::Role,
};

use crate::{
    http::{dashboard_user::dashboard_user, live_updates},
    state::AppState,
};

/// The stream's query: `only=notifications` to hear notifications alone.
#[derive(Debug, Default, serde::Deserialize)]
pub struct EventsQuery {
    only: Option<String>,
}

/// The stream, for a signed-in agent (or higher) of the tenant.
pub async fn inbox_events(
    State(state): State<AppState>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let user = match dashboard_user(&state.services, &headers, Role::Agent).await {
        Ok(user) => user,
        Err(refusal) => return refusal.into_response(),
    };
    let notifications_only = query.only.as_deref() == Some("notifications");
    let (tenant_id, user_id) = (user.tenant_id, user.id);
    let room = Room::Inbox { tenant_id };
    let updates = live_updates::updates(state.services.live().subscribe(room)).filter_map(move |update| {
        let (name, customer_id) = match &update.event {
            LiveEvent::Resync => ("resync", ""),
            // A user's notifications are theirs alone.
            LiveEvent::Notification { user_id: to } if *to == user_id => {
                return std::future::ready(Some(Ok(Event::default().event("notification").data("{}"))));
            }
            LiveEvent::Notification { .. } => return std::future::ready(None),
            _ if notifications_only => return std::future::ready(None),
            LiveEvent::Message { .. } => ("message", update.customer_id.as_str()),
            LiveEvent::Note { .. } => ("note", update.customer_id.as_str()),
            LiveEvent::Conversation => ("conversation", update.customer_id.as_str()),
            LiveEvent::Assigned => ("assigned", update.customer_id.as_str()),
            // This user's own typing is theirs to know.
            LiveEvent::Typing {
                user_id: Some(typist), ..
            } if *typist == user_id => return std::future::ready(None),
            LiveEvent::Typing {
                by_visitor,
                user_id: typist,
                name,
                draft,
                active,
            } => {
                let data = serde_json::json!({
                    "customerId": update.customer_id,
                    "by": if *by_visitor { "VISITOR" } else { "AGENT" },
                    "userId": typist,
                    "name": name,
                    "draft": draft,
                    "typing": active,
                });
                return std::future::ready(Some(Ok(Event::default().event("typing").data(data.to_string()))));
            }
            LiveEvent::Read { by_visitor, up_to_ms } => {
                let data = serde_json::json!({
                    "customerId": update.customer_id,
                    "by": if *by_visitor { "VISITOR" } else { "AGENT" },
                    "upTo": up_to_ms,
                });
                return std::future::ready(Some(Ok(Event::default().event("read").data(data.to_string()))));
            }
            // The inbox's room hears nothing else.
            _ => return std::future::ready(None),
        };
        let data = serde_json::json!({ "customerId": customer_id });
        std::future::ready(Some(Ok::<_, Infallible>(
            Event::default().event(name).data(data.to_string()),
        )))
    });
    Sse::new(updates).keep_alive(KeepAlive::default()).into_response()
}
