//! The agents' inbox (agents and up): conversations by status, a thread, reply,
//! assignment, status and the customer's tags, over the same services as `/rest/v1/conversation` and
//! `/rest/v1/message`. Live updates arrive through `GET /inbox/events` (see the
//! server's `http::inbox_events`). Each conversation also says which routing rule
//! sent it where (the match log, see [`super::routing_log`]) and, while it waits,
//! its SLA deadline.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where the inbox lives.
pub const INBOX_PATH: &str = "/inbox";

/// Conversations listed per status tab.
pub const INBOX_LIMIT: i64 = 100;

/// The most conversations a tab shows, after "Show older conversations".
pub const INBOX_MOST_SHOWN: i64 = 900;

/// Messages of a thread shown, the newest ones.
pub const THREAD_LIMIT: i64 = 100;

/// A conversation in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxRow {
    /// The customer.
    pub customer_id: String,
    /// How the customer is called.
    pub name: String,
    /// `UNREAD`, `UNRESOLVED` or `DONE`.
    pub status: String,
    /// The last message's text.
    pub last_text: String,
    /// When it last moved, `YYYY-MM-DD HH:MM` UTC.
    pub last_active: String,
    /// Customer messages since the last reply.
    pub waiting: i64,
    /// The assignee's name (a user's, else a team's), if any.
    pub assignee: Option<String>,
    /// The routing rule that last routed it (names joined by `›`), if one matched.
    pub routed_by: Option<String>,
    /// The earliest running SLA deadline of a waiting conversation, unix ms.
    pub sla_due_ms: Option<i64>,
}

/// The list for one tab, with every tab's count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxView {
    /// Conversations per status: unread, unresolved, done.
    pub counts: [i64; 3],
    /// The tab's conversations, most recently active first.
    pub rows: Vec<InboxRow>,
    /// Whether older conversations exist beyond these.
    pub more: bool,
    /// When the server read the list, unix ms: the SLA countdowns start from it,
    /// so that the page renders the same on the server and in the browser.
    pub now_ms: i64,
}

/// One message of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageView {
    /// Id.
    pub id: String,
    /// From the customer.
    pub inbound: bool,
    /// `MESSAGE`, `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    pub kind: String,
    /// Text or caption.
    pub text: Option<String>,
    /// Media or file URL.
    pub url: Option<String>,
    /// A card's button.
    pub button: Option<(String, String)>,
    /// Who wrote it, as shown.
    pub sender: String,
    /// `YYYY-MM-DD HH:MM` UTC.
    pub at: String,
    /// When it was stored, unix ms: compared with the other side's read mark.
    pub at_ms: i64,
}

/// A private note of a thread: only agents see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteView {
    /// Id.
    pub id: String,
    /// The text.
    pub text: String,
    /// Who wrote it, as shown.
    pub author: String,
    /// `YYYY-MM-DD HH:MM` UTC.
    pub at: String,
    /// When it was written, unix ms: where it goes among the messages.
    pub at_ms: i64,
    /// Whether it mentions the signed-in agent.
    pub mentions_me: bool,
}

/// A conversation opened in the inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadView {
    /// The customer.
    pub customer_id: String,
    /// How the customer is called.
    pub name: String,
    /// The customer's e-mail.
    pub email: Option<String>,
    /// Status.
    pub status: String,
    /// The visitor's rating of this (closed) conversation: 1–5 and the
    /// comment, if any.
    pub csat: Option<(i64, Option<String>)>,
    /// `user:<id>`, `team:<id>` or empty: the assignment picker's value.
    pub assigned: String,
    /// The customer's tags, set by agents and integrations.
    pub tags: Vec<String>,
    /// The tags the visitor's page set (read-only here).
    pub page_tags: Vec<String>,
    /// Whether the site signed the customer's identity.
    pub identity_verified: bool,
    /// What the visitor said of itself without a signature, as
    /// `(what, value)`: only claims.
    pub claims: Vec<(String, String)>,
    /// The page the visitor was last on.
    pub page_url: Option<String>,
    /// The customer's language (BCP 47).
    pub language: Option<String>,
    /// Why it went where it went: the decision that last routed it.
    pub routing: Option<crate::api::routing_log::RoutingLine>,
    /// Its routing decisions, newest first (at most
    /// [`crate::api::routing_log::CONVERSATION_ROUTING_SHOWN`]).
    pub routing_history: Vec<crate::api::routing_log::RoutingLine>,
    /// Oldest first; at most [`THREAD_LIMIT`], the newest.
    pub messages: Vec<MessageView>,
    /// Messages older than those shown.
    pub earlier: i64,
    /// The private notes written since the oldest message shown, oldest first.
    pub notes: Vec<NoteView>,
    /// The customer's latest recorded session on the website, to watch live
    /// or replay.
    pub recording: Option<String>,
    /// The visitor has seen the messages created up to this time, unix ms.
    pub visitor_read_ms: Option<i64>,
    /// The agents have seen the messages created up to this time, unix ms.
    pub agent_read_ms: Option<i64>,
}

/// Who a conversation can be assigned to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignees {
    /// The signed-in user's id ("Assign to me").
    pub me: String,
    /// Whether the signed-in user is an admin (who may export a customer's data).
    pub admin: bool,
    /// `(id, name)` of each user.
    pub users: Vec<(String, String)>,
    /// `(id, name)` of each team.
    pub teams: Vec<(String, String)>,
}

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
                id: m.id,
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

/// The signed-in agent has the conversation open on screen, up to
/// `message_id`: the visitor sees "Seen" under their messages up to it.
#[server(endpoint = "inbox_read")]
pub async fn inbox_read(customer_id: String, message_id: String) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use rapport_core::conversations::{ReadIn, Reader};
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let input = ReadIn {
        message_id: Some(message_id),
    };
    ctx.services
        .mark_read(&user.tenant_id, &customer_id, Reader::Agent, &input)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}

/// The signed-in agent types a reply (or stopped): the visitor sees "<their
/// name> is typing…", and so do the other agents.
#[server(endpoint = "inbox_typing")]
pub async fn inbox_typing(customer_id: String, typing: bool) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use rapport_core::conversations::AgentTypingIn;
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    // The display name only: an agent without one is not shown to visitors
    // by their e-mail address.
    let name = user.display_name.as_deref().map(str::trim).filter(|n| !n.is_empty());
    let input = AgentTypingIn {
        typing: Some(typing),
        name: name.map(|n| n.chars().take(rapport_core::conversations::MAX_TYPIST_NAME).collect()),
    };
    ctx.services
        .agent_typing(&user.tenant_id, &customer_id, Some(&user.id), &input)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
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

/// Sends a text reply from the signed-in agent; `text_block_id` names the text
/// block it was made from, if any, so that the use is counted.
#[server(endpoint = "inbox_reply")]
pub async fn inbox_reply(
    customer_id: String,
    message: String,
    text_block_id: Option<String>,
) -> Result<(), ServerFnError> {
    use rapport_core::conversations::{Channel, MessageIn, MessageType};
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let text_block_id = text_block_id.filter(|id| !id.is_empty());
    ctx.services
        .send_message_from(
            &user.tenant_id,
            MessageIn {
                customer_id: Some(customer_id),
                is_external_id: Some(false),
                kind: Some(MessageType::Message),
                message: Some(message),
                ..Default::default()
            },
            Channel::Dashboard,
            text_block_id.as_deref(),
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}

/// Writes a private note in the conversation, by the signed-in agent; `@name`
/// tells that colleague.
#[server(endpoint = "inbox_note")]
pub async fn inbox_note(customer_id: String, text: String) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    ctx.services
        .add_note(
            &user.tenant_id,
            &customer_id,
            &rapport_core::conversations::NoteIn { text: Some(text) },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}

/// Starts a video call with the conversation's customer, hosted by the
/// signed-in agent: the customer gets the invitation in the chat. Returns the
/// call's join link.
#[server(endpoint = "inbox_call")]
pub async fn inbox_call(customer_id: String) -> Result<String, ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let call = ctx
        .services
        .start_call(
            &user.tenant_id,
            &customer_id,
            Some(&user.id),
            false,
            rapport_core::conversations::Channel::Dashboard,
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(call.appointment.join_link)
}

/// Sets a conversation's status.
#[server(endpoint = "inbox_status")]
pub async fn inbox_status(customer_id: String, status: String) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use rapport_core::conversations::{ConversationStatus, StatusIn};
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let status = ConversationStatus::parse(&status).ok_or_else(|| {
        crate::ssr::to_server_error(rapport_core::CoreError::invalid(
            "status",
            "invalid",
            "choose UNREAD, UNRESOLVED or DONE",
        ))
    })?;
    ctx.services
        .set_conversation_status(
            &user.tenant_id,
            &customer_id,
            StatusIn { status: Some(status) },
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}

/// Adds tags to a conversation's customer (`add`, separated by commas) and
/// removes one (`remove`); either may be empty.
#[server(endpoint = "inbox_tags")]
pub async fn inbox_tags(customer_id: String, add: Option<String>, remove: Option<String>) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let add: Vec<String> = add
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    let remove: Vec<String> = remove.into_iter().filter(|t| !t.trim().is_empty()).collect();
    ctx.services
        .change_customer_tags(
            &user.tenant_id,
            &customer_id,
            rapport_core::customers::TagList::Trusted,
            &add,
            &remove,
            &crate::ssr::actor(&user),
        )
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}

/// Assigns a conversation: `to` is `user:<id>`, `team:<id>`, or empty for
/// nobody.
#[server(endpoint = "inbox_assign")]
pub async fn inbox_assign(customer_id: String, to: String) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use rapport_core::customers::Assignment;
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let assignment = match to.split_once(':') {
        Some(("user", id)) => Assignment {
            user_id: Some(rapport_core::ids::UserId::from(id)),
            team_id: None,
        },
        Some(("team", id)) => Assignment {
            user_id: None,
            team_id: Some(id.to_string()),
        },
        _ if to.is_empty() => Assignment::default(),
        _ => {
            return Err(crate::ssr::to_server_error(rapport_core::CoreError::invalid(
                "to",
                "invalid",
                "choose a user or a team",
            )))
        }
    };
    ctx.services
        .assign_customer(&user.tenant_id, &customer_id, assignment, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}
