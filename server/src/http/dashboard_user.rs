//! Who is asking, for the dashboard's own endpoints outside the REST API and
//! the server functions (downloads, event streams, uploads): the user of the
//! session cookie, with a role that allows the request.

use axum::{
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use rapport_app::ssr::session_token;
use rapport_core::{
    model::{Role, SessionUser},
    CoreError, Services,
};

/// Why a dashboard request was refused.
#[derive(Debug)]
pub enum Refusal {
    /// No session, or one that expired: 401 (a page may send to the login instead).
    SignIn,
    /// Signed in, with a role that does not allow this: 403.
    Role,
    /// The session could not be read: 500, logged.
    Failed(CoreError),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        match self {
            Refusal::SignIn => (StatusCode::UNAUTHORIZED, "sign in first").into_response(),
            Refusal::Role => (StatusCode::FORBIDDEN, "your role does not allow this").into_response(),
            Refusal::Failed(err) => {
                tracing::error!(error = %err, "dashboard request: session lookup failed");
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
        }
    }
}

/// The signed-in user of a dashboard request, if their role includes `role`.
pub async fn dashboard_user(services: &Services, headers: &HeaderMap, role: Role) -> Result<SessionUser, Refusal> {
    let user = match session_token(headers) {
        Some(token) => services.session_user(&token).await.map_err(Refusal::Failed)?,
        None => None,
    };
    match user {
        Some(user) if user.role.includes(role) => Ok(user),
        Some(_) => Err(Refusal::Role),
        None => Err(Refusal::SignIn),
    }
}
