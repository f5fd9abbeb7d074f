//! API keys: a tenant's keys (admins) and a platform admin's own platform keys.

use leptos::prelude::*;
use rapport_core::model::{ApiKey, ApiKeyKind, CreatedApiKey};

/// Where each kind of key is managed; also the path the no-JS flash cookie is scoped to.
pub fn page_path(kind: ApiKeyKind) -> &'static str {
    match kind {
        ApiKeyKind::Tenant => "/settings/api-keys",
        ApiKeyKind::Platform => "/platform/api",
    }
}

#[cfg(feature = "ssr")]
async fn authorize(
    kind: ApiKeyKind,
) -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    match kind {
        ApiKeyKind::Tenant => crate::ssr::require_role(rapport_core::model::Role::Admin).await,
        ApiKeyKind::Platform => crate::ssr::require_platform_admin().await,
    }
}

/// The keys of this kind the user manages, newest first.
#[server(endpoint = "list_keys")]
pub async fn list_keys(kind: ApiKeyKind) -> Result<Vec<ApiKey>, ServerFnError> {
    use crate::ssr::to_server_error;
    let (ctx, user) = authorize(kind).await?;
    match kind {
        ApiKeyKind::Tenant => {
            let page = rapport_core::model::PageRequest {
                page_size: Some(rapport_core::model::PageRequest::MAX_PAGE_SIZE),
                ..Default::default()
            };
            Ok(ctx
                .services
                .list_api_keys(&user.tenant_id, &page)
                .await
                .map_err(to_server_error)?
                .results)
        }
        ApiKeyKind::Platform => ctx.services.list_platform_keys(&user.id).await.map_err(to_server_error),
    }
}

/// Creates a key. Its token is in the answer only; without JavaScript it travels to
/// the page once in a short-lived, HttpOnly cookie instead.
#[server(endpoint = "create_key")]
pub async fn create_key(kind: ApiKeyKind, name: String) -> Result<CreatedApiKey, ServerFnError> {
    use crate::ssr::{put_flash, to_server_error};
    let (ctx, user) = authorize(kind).await?;
    let created = match kind {
        ApiKeyKind::Tenant => {
            ctx.services
                .create_api_key(&user.tenant_id, &name, &crate::ssr::actor(&user))
                .await
        }
        ApiKeyKind::Platform => {
            ctx.services
                .create_platform_key(&user.id, &name, &crate::ssr::actor(&user))
                .await
        }
    }
    .map_err(to_server_error)?;
    put_flash(&ctx, page_path(kind), &created);
    Ok(created)
}

/// Takes the key created by the last form post without JavaScript, if any, and
/// clears it: shown once.
#[server(endpoint = "take_created_key")]
pub async fn take_created_key(kind: ApiKeyKind) -> Result<Option<CreatedApiKey>, ServerFnError> {
    let (ctx, _user) = authorize(kind).await?;
    Ok(crate::ssr::take_flash::<CreatedApiKey>(&ctx, page_path(kind)).filter(|k| k.key.kind == kind))
}

/// Revokes a key.
#[server(endpoint = "revoke_key")]
pub async fn revoke_key(kind: ApiKeyKind, id: String) -> Result<(), ServerFnError> {
    use crate::ssr::to_server_error;
    let (ctx, user) = authorize(kind).await?;
    match kind {
        ApiKeyKind::Tenant => ctx
            .services
            .revoke_api_key(&user.tenant_id, &id, &crate::ssr::actor(&user))
            .await
            .map(|_| ()),
        ApiKeyKind::Platform => {
            ctx.services
                .revoke_platform_key(&user.id, &id, &crate::ssr::actor(&user))
                .await
        }
    }
    .map_err(to_server_error)
}
