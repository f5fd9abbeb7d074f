//! Tenant management for platform admins.

use leptos::prelude::*;
use rapport_core::model::Tenant;
use serde::{Deserialize, Serialize};

/// Where tenants are managed.
pub const TENANTS_PATH: &str = "/platform/tenants";

/// A created tenant and, when one was asked for, its first admin's credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedTenant {
    /// The tenant.
    pub tenant: Tenant,
    /// First admin's e-mail.
    pub admin_email: Option<String>,
    /// First admin's generated password, shown once.
    pub admin_password: Option<String>,
}

/// Every tenant, oldest first.
#[server(endpoint = "list_tenants")]
pub async fn list_tenants() -> Result<Vec<Tenant>, ServerFnError> {
    use crate::ssr::{require_platform_admin, to_server_error};
    let (ctx, _) = require_platform_admin().await?;
    let mut all = Vec::new();
    let mut page_number = 0;
    loop {
        let page = rapport_core::model::PageRequest {
            page_number: Some(page_number),
            page_size: Some(rapport_core::model::PageRequest::MAX_PAGE_SIZE),
            offset: None,
        };
        let page = ctx.services.list_tenants(&page).await.map_err(to_server_error)?;
        let last = page.page.page_number + 1 >= page.page.total_pages;
        all.extend(page.results);
        if last {
            return Ok(all);
        }
        page_number += 1;
    }
}

/// Creates a tenant, with a first admin when `admin_email` is not blank.
#[server(endpoint = "create_tenant")]
pub async fn create_tenant(
    name: String,
    slug: String,
    timezone: String,
    admin_email: String,
) -> Result<CreatedTenant, ServerFnError> {
    use crate::ssr::{require_platform_admin, to_server_error};
    let (ctx, user) = require_platform_admin().await?;
    let blank_to_none = |s: String| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let admin_email = blank_to_none(admin_email);
    let input = rapport_core::tenants::NewTenant {
        name: Some(name),
        slug: blank_to_none(slug),
        timezone: blank_to_none(timezone),
    };
    let (tenant, admin) = ctx
        .services
        .create_tenant_with_admin(input, admin_email.as_deref(), None, &crate::ssr::actor(&user))
        .await
        .map_err(to_server_error)?;
    let created = CreatedTenant {
        tenant,
        admin_email: admin.as_ref().map(|a| a.email.clone()),
        admin_password: admin.and_then(|a| a.generated_password),
    };
    crate::ssr::put_flash(&ctx, TENANTS_PATH, &created);
    Ok(created)
}

/// The tenant created by the last form post without JavaScript, shown once.
#[server(endpoint = "take_created_tenant")]
pub async fn take_created_tenant() -> Result<Option<CreatedTenant>, ServerFnError> {
    let (ctx, _) = crate::ssr::require_platform_admin().await?;
    Ok(crate::ssr::take_flash(&ctx, TENANTS_PATH))
}

/// One tenant.
#[server(endpoint = "get_tenant")]
pub async fn get_tenant(id: String) -> Result<Tenant, ServerFnError> {
    use crate::ssr::{require_platform_admin, to_server_error};
    let (ctx, _) = require_platform_admin().await?;
    ctx.services
        .get_tenant(&rapport_core::ids::TenantId::new(id))
        .await
        .map_err(to_server_error)
}

/// Renames a tenant, changes its slug or its time zone (reports are cut in the
/// new zone from its next local midnight).
#[server(endpoint = "edit_tenant")]
pub async fn edit_tenant(id: String, name: String, slug: String, timezone: String) -> Result<Tenant, ServerFnError> {
    use crate::ssr::{require_platform_admin, to_server_error};
    let (ctx, user) = require_platform_admin().await?;
    let update = rapport_core::tenants::TenantUpdate {
        name: Some(name.trim().to_string()),
        slug: Some(slug.trim().to_string()),
        timezone: Some(timezone.trim().to_string()),
        ..Default::default()
    };
    ctx.services
        .update_tenant(&rapport_core::ids::TenantId::new(id), update, &crate::ssr::actor(&user))
        .await
        .map_err(to_server_error)
}

/// Deletes a tenant and all its data, then shows the list.
#[server(endpoint = "delete_tenant")]
pub async fn delete_tenant(id: String) -> Result<(), ServerFnError> {
    use crate::ssr::{require_platform_admin, to_server_error};
    let (ctx, user) = require_platform_admin().await?;
    ctx.services
        .delete_tenant(&rapport_core::ids::TenantId::new(id), &crate::ssr::actor(&user))
        .await
        .map_err(to_server_error)?;
    leptos_axum::redirect(TENANTS_PATH);
    Ok(())
}
