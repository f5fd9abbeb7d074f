//! Users of the tenant, from the dashboard (admins): the same services as
//! `/rest/v1/user`, with wasm-safe view types.

use leptos::prelude::*;
use rapport_core::model::{PageInfo, Role};
use serde::{Deserialize, Serialize};

/// Where users are managed; the no-JavaScript flash cookie is scoped to it.
pub const USERS_PATH: &str = "/settings/users";

/// Users per page of the list.
pub const USERS_PER_PAGE: i64 = 25;

/// A user as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserView {
    /// Id.
    pub id: String,
    /// E-mail.
    pub email: String,
    /// The client's own id.
    pub external_id: Option<String>,
    /// Name shown to customers and colleagues.
    pub display_name: Option<String>,
    /// Free text.
    pub description: Option<String>,
    /// Role.
    pub role: Role,
    /// Skills and labels.
    pub tags: Vec<String>,
    /// MCO integration.
    pub mco_enabled: bool,
    /// Capacity: open conversations at once; `None`: the workspace default.
    pub max_concurrent_chats: Option<i64>,
    /// Whether the user can sign in.
    pub has_password: bool,
}

/// One page of the user list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserList {
    /// The users on this page.
    pub users: Vec<UserView>,
    /// Where the page sits.
    pub page: PageInfo,
}

/// A password shown once: a new user's, or a reset one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasswordShown {
    /// The user.
    pub user: UserView,
    /// The password, when Rapport generated it.
    pub password: Option<String>,
}

#[cfg(feature = "ssr")]
fn view(u: rapport_core::users::User) -> UserView {
    UserView {
        id: u.id.into_string(),
        email: u.email,
        external_id: u.external_id,
        display_name: u.display_name,
        description: u.description,
        role: u.role_id,
        tags: u.tags,
        mco_enabled: u.mco_enabled,
        max_concurrent_chats: u.max_concurrent_chats,
        has_password: u.has_password,
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(Role::Admin).await
}

#[cfg(feature = "ssr")]
fn non_empty(text: Option<String>) -> Option<String> {
    text.map(|t| t.trim().to_string()).filter(|t| !t.is_empty())
}

/// Tags typed as one comma-separated line.
pub fn split_tags(line: &str) -> Vec<String> {
    line.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// A page of users, by e-mail; `search` matches e-mail or display name.
#[server(endpoint = "list_users")]
pub async fn list_users(search: Option<String>, page: Option<i64>) -> Result<UserList, ServerFnError> {
    let (ctx, user) = admin().await?;
    let request = rapport_core::model::PageRequest {
        page_number: Some(page.unwrap_or(0).max(0)),
        page_size: Some(USERS_PER_PAGE),
        ..Default::default()
    };
    let found = ctx
        .services
        .list_users(&user.tenant_id, non_empty(search).as_deref(), &request)
        .await
        .map_err(crate::ssr::to_server_error)?;
    Ok(UserList {
        users: found.results.into_iter().map(view).collect(),
        page: found.page,
    })
}

/// One user.
#[server(endpoint = "get_user")]
pub async fn get_user(id: String) -> Result<UserView, ServerFnError> {
    let id = rapport_core::ids::UserId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .get_user(&user.tenant_id, &id)
        .await
        .map(view)
        .map_err(crate::ssr::to_server_error)
}

/// The fields of the user form.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UserForm {
    /// E-mail.
    pub email: String,
    /// Display name.
    pub display_name: String,
    /// `ADMIN`, `SUPERVISOR` or `AGENT`.
    pub role: String,
    /// Comma-separated tags.
    pub tags: String,
    /// The client's own id.
    pub external_id: String,
    /// Free text.
    pub description: String,
    /// Checkbox: present means on.
    pub mco_enabled: Option<String>,
    /// Capacity, a number 1–100; empty for the workspace default.
    pub max_concurrent_chats: String,
}

#[cfg(feature = "ssr")]
fn user_in(form: UserForm, password: Option<String>) -> Result<rapport_core::users::UserIn, ServerFnError> {
    let max_concurrent_chats = match non_empty(Some(form.max_concurrent_chats)) {
        None => None,
        Some(n) => Some(n.parse::<i64>().map_err(|_| {
            crate::ssr::to_server_error(rapport_core::CoreError::invalid(
                "maxConcurrentChats",
                "invalid_type",
                "the capacity must be a whole number from 1 to 100, or empty for the workspace default",
            ))
        })?),
    };
    Ok(rapport_core::users::UserIn {
        id: None,
        email: Some(form.email.trim().to_string()),
        external_id: non_empty(Some(form.external_id)),
        display_name: non_empty(Some(form.display_name)),
        description: non_empty(Some(form.description)),
        role_id: non_empty(Some(form.role)),
        password,
        tags: Some(split_tags(&form.tags)),
        mco_enabled: Some(form.mco_enabled.is_some()),
        admin: None,
        max_concurrent_chats,
    })
}

/// Adds a user. Without a password Rapport generates one, shown once (without
/// JavaScript, through the flash cookie).
#[server(endpoint = "add_user")]
pub async fn add_user(form: UserForm, password: Option<String>) -> Result<PasswordShown, ServerFnError> {
    let (ctx, user) = admin().await?;
    let chosen = non_empty(password);
    let generated = chosen.is_none().then(rapport_core::crypto::generate_password);
    let input = user_in(form, chosen.or_else(|| generated.clone()))?;
    let created = ctx
        .services
        .save_user(&user.tenant_id, input, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    let shown = PasswordShown {
        user: view(created),
        password: generated,
    };
    crate::ssr::put_flash(&ctx, USERS_PATH, &shown);
    Ok(shown)
}

/// Takes the password shown once after a form post without JavaScript, if any.
#[server(endpoint = "take_user_password")]
pub async fn take_user_password() -> Result<Option<PasswordShown>, ServerFnError> {
    let (ctx, _) = admin().await?;
    Ok(crate::ssr::take_flash(&ctx, USERS_PATH))
}

/// Changes a user; the password stays as it is.
#[server(endpoint = "edit_user")]
pub async fn edit_user(id: String, form: UserForm) -> Result<UserView, ServerFnError> {
    let id = rapport_core::ids::UserId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .update_user(&user.tenant_id, &id, user_in(form, None)?, &crate::ssr::actor(&user))
        .await
        .map(view)
        .map_err(crate::ssr::to_server_error)
}

/// Gives a user a new generated password, shown once, and ends their sessions.
#[server(endpoint = "reset_user_password")]
pub async fn reset_user_password(id: String) -> Result<PasswordShown, ServerFnError> {
    let id = rapport_core::ids::UserId::from(id);
    let (ctx, user) = admin().await?;
    let target = ctx
        .services
        .get_user(&user.tenant_id, &id)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let password = rapport_core::crypto::generate_password();
    ctx.services
        .set_password(&user.tenant_id, &id, &password, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    let mut shown = PasswordShown {
        user: view(target),
        password: Some(password),
    };
    shown.user.has_password = true;
    crate::ssr::put_flash(&ctx, USERS_PATH, &shown);
    Ok(shown)
}

/// Deletes a user, then shows the list.
#[server(endpoint = "remove_user")]
pub async fn remove_user(id: String) -> Result<(), ServerFnError> {
    let id = rapport_core::ids::UserId::from(id);
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_user(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(USERS_PATH);
    Ok(())
}
