//! What the inbox reads: the conversation list, one thread with its notes and
//! routing, and who conversations can be assigned to.

use leptos::prelude::*;

use super::{Assignees, InboxView, ThreadView};
#[cfg(feature = "ssr")]
use super::{InboxRow, MessageView, NoteView, INBOX_LIMIT, INBOX_MOST_SHOWN, THREAD_LIMIT};

#[cfg(feature = "ssr")]
mod server {
    use std::collections::HashMap;

    use rapport_core::{model::PageRequest, Services};

    use crate::api::routing_log::{server::lines, RoutingLine, CONVERSATION_ROUTING_SHOWN};

    /// Every user's and team's name by id, for the assignment picker.
    pub(super) async fn names(
        services: &Services,
        tenant_id: &rapport_core::ids::TenantId,
    ) -> rapport_core::error::CoreResult<(Vec<(String, String)>, Vec<(String, String)>)> {
        let all = PageRequest {
            page_size: Some(PageRequest::MAX_PAGE_SIZE),
            ..Default::default()
        };
        let mut users = Vec::new();
        let mut number = 0;
        loop {
            let page = services
                .list_users(
                    tenant_id,
                    None,
                    &PageRequest {
                        page_number: Some(number),
                        ..all
                    },
                )
                .await?;
            let done = page.results.len() < all.page_size.unwrap_or_default() as usize;
            users.extend(page.results.into_iter().map(|u| {
                (
                    u.id.into_string(),
                    u.display_name.filter(|n| !n.is_empty()).unwrap_or(u.email),
                )
            }));
            if done {
                break;
            }
            number += 1;
        }
        let teams = services.list_teams(tenant_id, &all).await?;
        let teams = teams
            .results
            .into_iter()
            .map(|t| (t.id.into_string(), t.name))
            .collect();
        Ok((users, teams))
    }

    /// Per conversation of `ids`: the names of the rule that last routed it (when
    /// one matched), and its earliest running SLA deadline (unix ms).
    pub(super) async fn routing_and_deadlines(
        services: &Services,
        tenant_id: &rapport_core::ids::TenantId,
        ids: &[String],
    ) -> rapport_core::error::CoreResult<(HashMap<String, String>, HashMap<String, i64>)> {
        let routed = services
            .latest_routing(tenant_id, ids)
            .await?
            .into_iter()
            .filter(|r| !r.rule_names.is_empty())
            .map(|r| (r.customer_id.into_string(), r.rule_names.join(" › ")))
            .collect();
        let deadlines = services
            .sla_deadlines(tenant_id, ids)
            .await?
            .into_iter()
            .map(|(id, due)| (id, due.timestamp_millis()))
            .collect();
        Ok((routed, deadlines))
    }

    /// A conversation's latest routing decision and its routing history.
    pub(super) async fn routing_of(
        services: &Services,
        tenant_id: &rapport_core::ids::TenantId,
        customer_id: &rapport_core::ids::CustomerId,
    ) -> rapport_core::error::CoreResult<(Option<RoutingLine>, Vec<RoutingLine>)> {
        let ids = [customer_id.to_string()];
        let latest = services.latest_routing(tenant_id, &ids).await?;
        let history = services
            .routing_log_of_conversation(tenant_id, customer_id, CONVERSATION_ROUTING_SHOWN)
            .await?;
        let latest = lines(services, tenant_id, latest, false).await?.pop();
        Ok((latest, lines(services, tenant_id, history, false).await?))
    }

    /// `YYYY-MM-DD HH:MM` in UTC.
    pub(super) fn minute(at: chrono::DateTime<chrono::Utc>) -> String {
        at.format("%Y-%m-%d %H:%M").to_string()
    }
}

/// The `shown` (default [`INBOX_LIMIT`]) most recently active conversations of
/// one status (`UNREAD`, `UNRESOLVED`, `DONE`); with `mine`, only those assigned
/// to the signed-in user.
#[server(endpoint = "inbox_list")]
pub async fn inbox_list(status: String, mine: bool, shown: Option<i64>) -> Result<InboxView, ServerFnError> {
    use rapport_core::{conversations::ConversationStatus, model::Role};
    let (ctx, user) = crate::ssr::require_role(Role::Agent).await?;
    let status = ConversationStatus::parse(&status).unwrap_or(ConversationStatus::Unread);
    let services = &ctx.services;
    let tenant = &user.tenant_id;
    let counts = services
        .inbox_counts(tenant)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let shown = shown.unwrap_or(INBOX_LIMIT).clamp(1, INBOX_MOST_SHOWN);
    // One more than shown tells whether there are older ones.
    let mut items = services
        .inbox(tenant, status, mine.then_some(user.id.as_str()), shown + 1)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let more = items.len() as i64 > shown;
    items.truncate(shown as usize);
    let ids: Vec<String> = items.iter().map(|i| i.customer_id.to_string()).collect();
    let (routed, deadlines) = server::routing_and_deadlines(services, tenant, &ids)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let rows = items
        .into_iter()
        .map(|i| InboxRow {
            routed_by: routed.get(i.customer_id.as_str()).cloned(),
            sla_due_ms: deadlines.get(i.customer_id.as_str()).copied(),
            assignee: i.assignee_name,
            customer_id: i.customer_id.into_string(),
            name: i.display_name,
            status: i.status.as_str().to_string(),
            last_text: i.last_text,
            last_active: server::minute(i.last_active),
            waiting: i.waiting,
        })
        .collect();
    Ok(InboxView {
        counts: [counts.unread, counts.unresolved, counts.done],
        rows,
        more,
        now_ms: chrono::Utc::now().timestamp_millis(),
    })
}

/// A conversation's customer, status, assignment and newest messages.
#[server(endpoint = "inbox_thread")]
pub async fn inbox_thread(customer_id: String) -> Result<ThreadView, ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use rapport_core::{conversations::Direction, model::PageRequest, model::Role};
    let (ctx, user) = crate::ssr::require_role(Role::Agent).await?;
    let services = &ctx.services;
    let tenant = &user.tenant_id;
    let customer = services
        .get_customer(tenant, &customer_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let conversation = services
        .get_conversation(tenant, &customer_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let page = services
        .list_messages(
            tenant,
            &customer_id,
            &PageRequest {
                page_size: Some(THREAD_LIMIT),
                ..Default::default()
            },
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    let notes = services
        .list_notes(
            tenant,
            &customer_id,
            &PageRequest {
                page_size: Some(THREAD_LIMIT),
                ..Default::default()
            },
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    let mut senders: Vec<&str> = page.results.iter().filter_map(|m| m.sender_id.as_deref()).collect();
    senders.extend(notes.results.iter().filter_map(|n| n.author_id.as_deref()));
    senders.sort_unstable();
    senders.dedup();
    let names = services
        .user_names(tenant, &senders)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let customer_name = rapport_core::conversations::customer_name(&customer);
    let earlier = (page.page.total_elements - page.results.len() as i64).max(0);
    let page_oldest_ms = page
        .results
        .last()
        .map_or(i64::MIN, |m| m.created_at.timestamp_millis());
    let messages = page
        .results
        .into_iter()
        .rev()
        .map(|m| {
            let inbound = m.direction == Direction::Inbound;
            let sender = if inbound {
                customer_name.clone()
            } else {
                m.sender_id
                    .as_ref()
                    .and_then(|id| names.get(id).cloned())
                    .unwrap_or_else(|| m.sender_type.as_str().to_string())
            };
            MessageView {
                id: m.id.into_string(),
                inbound,
                kind: m.kind.as_str().to_string(),
                text: m.message,
                url: m.url,
                button: m.button_text.zip(m.button_link),
                sender,
                at: server::minute(m.created_at),
                at_ms: m.created_at.timestamp_millis(),
            }
        })
        .collect();
    // Notes older than the oldest message shown belong to what is not shown.
    let oldest_shown = if earlier > 0 { page_oldest_ms } else { i64::MIN };
    let notes = notes
        .results
        .into_iter()
        .rev()
        .filter(|n| n.created_at.timestamp_millis() >= oldest_shown)
        .map(|n| NoteView {
            mentions_me: n.mentions.iter().any(|m| *m == user.id),
            author: n
                .author_id
                .as_ref()
                .and_then(|id| names.get(id).cloned())
                .unwrap_or_else(|| "An integration".into()),
            at: server::minute(n.created_at),
            at_ms: n.created_at.timestamp_millis(),
            id: n.id,
            text: n.text,
        })
        .collect();
    let assigned = match (&customer.assigned_user, &customer.assigned_team) {
        (Some(u), _) => format!("user:{u}"),
        (None, Some(t)) => format!("team:{t}"),
        _ => String::new(),
    };
    let (routing, routing_history) = server::routing_of(services, tenant, &customer_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let recording = services
        .latest_recording_of_customer(tenant, &customer_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .map(|s| s.id);
    Ok(ThreadView {
        recording,
        customer_id: customer_id.into_string(),
        name: customer_name,
        email: customer.email,
        status: conversation.status.as_str().to_string(),
        csat: conversation.csat.map(|c| (c.rating, c.comment)),
        assigned,
        tags: customer.tags,
        page_tags: customer.page_tags,
        identity_verified: customer.identity_verified,
        claims: [
            ("e-mail", customer.claimed_email),
            ("customer id", customer.claimed_external_id),
        ]
        .into_iter()
        .filter_map(|(what, value)| value.map(|v| (what.to_string(), v)))
        .collect(),
        page_url: customer.page_url,
        language: customer.language,
        routing,
        routing_history,
        messages,
        earlier,
        notes,
        visitor_read_ms: conversation.visitor_read_at.map(|t| t.timestamp_millis()),
        agent_read_ms: conversation.agent_read_at.map(|t| t.timestamp_millis()),
    })
}

/// Who conversations can be assigned to.
#[server(endpoint = "inbox_assignees")]
pub async fn inbox_assignees() -> Result<Assignees, ServerFnError> {
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let (users, teams) = server::names(&ctx.services, &user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(Assignees {
        admin: user.role.includes(rapport_core::model::Role::Admin),
        me: user.id.into_string(),
        users,
        teams,
    })
}
