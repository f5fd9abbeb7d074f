//! The signed-in user's own account: their dashboard sessions, and ending them.

use leptos::prelude::*;
use rapport_core::model::SignInSession;

/// The signed-in user and the asking browser's session token.
#[cfg(feature = "ssr")]
async fn signed_in() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser, String), ServerFnError>
{
    // Every role has an account page: the lowest role is enough.
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Agent).await?;
    let token = crate::ssr::session_token(&crate::ssr::request_parts()?.headers)
        .ok_or_else(|| ServerFnError::new("sign in first"))?;
    Ok((ctx, user, token))
}

/// The user's signed-in sessions, most recently used first; the asking
/// browser's is marked `current`.
#[server(endpoint = "my_sessions")]
pub async fn my_sessions() -> Result<Vec<SignInSession>, ServerFnError> {
    let (ctx, user, token) = signed_in().await?;
    ctx.services
        .sign_in_sessions(&user.id, Some(&token))
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Ends one of the user's sessions (a browser they no longer use).
#[server(endpoint = "end_my_session")]
pub async fn end_my_session(id: String) -> Result<(), ServerFnError> {
    let (ctx, user, _) = signed_in().await?;
    ctx.services
        .end_sign_in_session(&user.id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Ends every session of the user but this browser's; returns how many ended.
#[server(endpoint = "end_my_other_sessions")]
pub async fn end_my_other_sessions() -> Result<u64, ServerFnError> {
    let (ctx, user, token) = signed_in().await?;
    ctx.services
        .end_other_sign_in_sessions(&user.id, &token, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)
}
