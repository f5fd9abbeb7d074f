//! System messages of the tenant, from the dashboard (admins): the same services
//! as `/rest/v1/systemmessage`. Each message is one text in one language; messages
//! that share a `name` are translations of each other, and a routing rule that
//! sends one sends the customer the one in their language. The page groups them by
//! language.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where system messages are managed.
pub const SYSTEM_MESSAGES_PATH: &str = "/settings/system-messages";

/// A system message as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemMessageView {
    /// Id.
    pub id: String,
    /// BCP 47 language tag.
    pub language: String,
    /// The text.
    pub message: String,
    /// The name shared by its translations; empty without one.
    pub name: String,
}

#[cfg(feature = "ssr")]
mod server {
    use rapport_core::config::system_messages::SystemMessage;

    use super::SystemMessageView;

    pub(super) fn view(m: SystemMessage) -> SystemMessageView {
        SystemMessageView {
            id: m.meta.id.unwrap_or_default(),
            language: m.language.unwrap_or_default(),
            message: m.message.unwrap_or_default(),
            name: m.name.unwrap_or_default(),
        }
    }

    pub(super) fn input(id: Option<String>, language: String, message: String, name: Option<String>) -> SystemMessage {
        SystemMessage {
            meta: rapport_core::config::Meta {
                id,
                ..Default::default()
            },
            message: Some(message),
            language: Some(language.trim().to_string()),
            // Blank means none; the service trims and checks the rest.
            name: name.filter(|n| !n.trim().is_empty()),
        }
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// Every system message, by language, name and text; with `language`, only
/// that language's.
#[server(endpoint = "list_system_messages")]
pub async fn list_system_messages(language: Option<String>) -> Result<Vec<SystemMessageView>, ServerFnError> {
    use rapport_core::config::system_messages::SystemMessage;
    let (ctx, user) = admin().await?;
    let wanted = language.map(|l| l.trim().to_lowercase()).filter(|l| !l.is_empty());
    let mut all: Vec<SystemMessageView> = ctx
        .services
        .config_all::<SystemMessage>(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .map(server::view)
        .filter(|m| wanted.as_ref().is_none_or(|w| m.language.to_lowercase() == *w))
        .collect();
    all.sort_by(|a, b| (&a.language, &a.name, &a.message).cmp(&(&b.language, &b.name, &b.message)));
    Ok(all)
}

/// One system message.
#[server(endpoint = "get_system_message")]
pub async fn get_system_message(id: String) -> Result<SystemMessageView, ServerFnError> {
    use rapport_core::config::system_messages::SystemMessage;
    let (ctx, user) = admin().await?;
    ctx.services
        .config_get::<SystemMessage>(&user.tenant_id, &id)
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Adds a system message (`name` is optional).
#[server(endpoint = "add_system_message")]
pub async fn add_system_message(
    language: String,
    message: String,
    name: Option<String>,
) -> Result<SystemMessageView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .save_system_message(
            &user.tenant_id,
            server::input(None, language, message, name),
            &crate::ssr::actor(&user),
        )
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Changes a system message's language, text and name (blank or absent: none).
#[server(endpoint = "edit_system_message")]
pub async fn edit_system_message(
    id: String,
    language: String,
    message: String,
    name: Option<String>,
) -> Result<SystemMessageView, ServerFnError> {
    use rapport_core::config::system_messages::SystemMessage;
    let (ctx, user) = admin().await?;
    // Overriding an unknown id would be a 404 from the service too; asking
    // first keeps another tenant's ids out of reach with the same answer.
    ctx.services
        .config_get::<SystemMessage>(&user.tenant_id, &id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    ctx.services
        .save_system_message(
            &user.tenant_id,
            server::input(Some(id), language, message, name),
            &crate::ssr::actor(&user),
        )
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Deletes a system message no routing rule uses, then shows the list.
#[server(endpoint = "remove_system_message")]
pub async fn remove_system_message(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_system_message(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(SYSTEM_MESSAGES_PATH);
    Ok(())
}
