//! What an agent does in the inbox: marks a thread read, types, replies,
//! writes a note, offers a call, sets the status, tags and assigns.

use leptos::prelude::*;

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
