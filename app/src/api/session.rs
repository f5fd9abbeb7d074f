//! Who is signed in.

use leptos::prelude::*;
use rapport_core::model::SessionUser;

/// The signed-in user, or `None`.
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<Option<SessionUser>, ServerFnError> {
    crate::ssr::optional_user().await
}
