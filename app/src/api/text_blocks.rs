//! Text blocks from the dashboard: admins manage them under Settings (the same
//! services as `/rest/v1/textblock`), and agents insert them in the inbox,
//! chosen and filled in for the conversation open, or send a flow from the
//! same picker.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where text blocks are managed.
pub const TEXT_BLOCKS_PATH: &str = "/settings/text-blocks";

/// A text block as the settings pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlockView {
    /// Id.
    pub id: String,
    /// What an agent types after `/`.
    pub shortcut: String,
    /// Its language; empty: every language.
    pub language: String,
    /// The text, variables unfilled.
    pub text: String,
    /// `TENANT`, `TEAM` or `USER`.
    pub scope: String,
    /// The team's or user's id; empty for the workspace's blocks.
    pub owner: String,
    /// Messages sent from it.
    pub uses: i64,
}

/// A page of text blocks: those shown and how many match in all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextBlockList {
    /// The blocks shown, by shortcut and language.
    pub blocks: Vec<TextBlockView>,
    /// How many blocks match the filter.
    pub total: i64,
}

/// What the inbox's picker offers in one conversation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Picker {
    /// Per shortcut, the block that fits this customer, filled in.
    pub blocks: Vec<BlockChoice>,
    /// `(id, name)` of each flow, to send by hand.
    pub flows: Vec<(String, String)>,
}

/// A block ready to insert.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockChoice {
    /// The block's id, sent with the reply to count the use.
    pub id: String,
    /// Its shortcut.
    pub shortcut: String,
    /// Its language; empty: every language.
    pub language: String,
    /// The text, filled in for this customer and agent.
    pub text: String,
}

/// The scopes, as the forms offer them.
pub const SCOPES: [(&str, &str); 3] = [
    ("TENANT", "Everyone in the workspace"),
    ("TEAM", "The members of a team"),
    ("USER", "One user"),
];

#[cfg(feature = "ssr")]
mod server {
    use rapport_core::text_blocks::{Scope, TextBlock, TextBlockIn};

    use super::TextBlockView;

    pub(super) fn view(b: TextBlock) -> TextBlockView {
        let scope = serde_json::to_value(b.scope)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        TextBlockView {
            id: b.id,
            shortcut: b.shortcut,
            language: b.language.unwrap_or_default(),
            text: b.text,
            scope,
            owner: b
                .team_id
                .or(b.user_id.map(rapport_core::ids::UserId::into_string))
                .unwrap_or_default(),
            uses: b.uses,
        }
    }

    /// The form's fields as the service takes them: the owner select that
    /// belongs to the chosen scope is read, the other ignored (both are on the
    /// form, so that it works without scripts).
    pub(super) fn input(
        shortcut: String,
        language: String,
        text: String,
        scope: String,
        team_id: Option<String>,
        user_id: Option<String>,
    ) -> TextBlockIn {
        let scope = match scope.as_str() {
            "TEAM" => Scope::Team,
            "USER" => Scope::User,
            _ => Scope::Tenant,
        };
        TextBlockIn {
            shortcut: Some(shortcut),
            language: Some(language).filter(|l| !l.trim().is_empty()),
            text: Some(text),
            scope: Some(scope),
            team_id: team_id.filter(|_| scope == Scope::Team),
            user_id: user_id
                .filter(|_| scope == Scope::User)
                .map(rapport_core::ids::UserId::from),
        }
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// The first 200 text blocks whose shortcut starts with `shortcut`.
#[server(endpoint = "list_text_blocks")]
pub async fn list_text_blocks(shortcut: Option<String>) -> Result<TextBlockList, ServerFnError> {
    use rapport_core::{model::PageRequest, text_blocks::TextBlockFilter};
    let (ctx, user) = admin().await?;
    let filter = TextBlockFilter {
        shortcut: shortcut
            .map(|s| s.trim().trim_start_matches('/').to_lowercase())
            .filter(|s| !s.is_empty()),
        ..Default::default()
    };
    let page = PageRequest {
        page_size: Some(PageRequest::MAX_PAGE_SIZE),
        ..Default::default()
    };
    let found = ctx
        .services
        .list_text_blocks(&user.tenant_id, &filter, &page)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(TextBlockList {
        total: found.page.total_elements,
        blocks: found.results.into_iter().map(server::view).collect(),
    })
}

/// One text block.
#[server(endpoint = "get_text_block")]
pub async fn get_text_block(id: String) -> Result<TextBlockView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .get_text_block(&user.tenant_id, &id)
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Adds a text block.
#[server(endpoint = "add_text_block")]
pub async fn add_text_block(
    shortcut: String,
    language: String,
    text: String,
    scope: String,
    team_id: Option<String>,
    user_id: Option<String>,
) -> Result<TextBlockView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .create_text_block(
            &user.tenant_id,
            server::input(shortcut, language, text, scope, team_id, user_id),
            &crate::ssr::actor(&user),
        )
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Changes a text block.
#[server(endpoint = "edit_text_block")]
pub async fn edit_text_block(
    id: String,
    shortcut: String,
    language: String,
    text: String,
    scope: String,
    team_id: Option<String>,
    user_id: Option<String>,
) -> Result<TextBlockView, ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .update_text_block(
            &user.tenant_id,
            &id,
            server::input(shortcut, language, text, scope, team_id, user_id),
            &crate::ssr::actor(&user),
        )
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Deletes a text block, then shows the list.
#[server(endpoint = "remove_text_block")]
pub async fn remove_text_block(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_text_block(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(TEXT_BLOCKS_PATH);
    Ok(())
}

/// The blocks the signed-in agent may insert in `customer_id`'s conversation,
/// filled in, and the flows they may send.
#[server(endpoint = "inbox_picker")]
pub async fn inbox_picker(customer_id: String) -> Result<Picker, ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    use rapport_core::config::{flows::Flow, ConfigKind};
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let blocks = ctx
        .services
        .text_block_choices(&user.tenant_id, &user.id, &customer_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let flows = ctx
        .services
        .config_all::<Flow>(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(Picker {
        blocks: blocks
            .into_iter()
            .map(|b| BlockChoice {
                id: b.id,
                shortcut: b.shortcut,
                language: b.language.unwrap_or_default(),
                text: b.text,
            })
            .collect(),
        flows: flows
            .into_iter()
            .map(|f| (f.meta().id.clone().unwrap_or_default(), f.display_name()))
            .collect(),
    })
}

/// Sends a flow to the customer, by the signed-in agent.
#[server(endpoint = "inbox_send_flow")]
pub async fn inbox_send_flow(customer_id: String, flow_id: String) -> Result<(), ServerFnError> {
    let customer_id = rapport_core::ids::CustomerId::from(customer_id);
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    ctx.services
        .send_flow_by_hand(&user.tenant_id, &customer_id, &flow_id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(())
}
