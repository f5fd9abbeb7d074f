//! The signed-in user's presence (online / away / offline), which feeds the agent
//! reports. The top bar sets it and sends a heartbeat while the dashboard is open.

use leptos::prelude::*;
use rapport_core::reports::api::PresenceStatus;

/// The user's current status; `None` when signed out. Loaded with every signed-in
/// page, so it never sets the response status: the page decides that (a redirect
/// to the login page, a 403).
#[server(endpoint = "my_presence")]
pub async fn my_presence() -> Result<Option<PresenceStatus>, ServerFnError> {
    use crate::ssr::{context, optional_user, to_server_error};
    let Some(user) = optional_user().await? else {
        return Ok(None);
    };
    context()?
        .services
        .presence_status(&user.tenant_id, &user.id)
        .await
        .map(Some)
        .map_err(to_server_error)
}

/// Sets the user's status and returns it.
#[server(endpoint = "set_my_presence")]
pub async fn set_my_presence(status: PresenceStatus) -> Result<PresenceStatus, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Agent).await?;
    ctx.services
        .set_presence(&user.tenant_id, &user.id, status)
        .await
        .map_err(to_server_error)?;
    Ok(status)
}

/// The dashboard is still open: keeps the presence intervals alive (they close at
/// the last heartbeat when none comes within the timeout) and returns the status.
#[server(endpoint = "presence_heartbeat")]
pub async fn presence_heartbeat() -> Result<PresenceStatus, ServerFnError> {
    use crate::ssr::{require_role, to_server_error};
    let (ctx, user) = require_role(rapport_core::model::Role::Agent).await?;
    ctx.services
        .presence_heartbeat(&user.tenant_id, &user.id)
        .await
        .map_err(to_server_error)
}
