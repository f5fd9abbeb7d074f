//! `GET /inbox/{customerId}/export`: the dashboard's "Export data" of a
//! conversation's customer (admins): the same JSON document as
//! `GET /rest/v1/customer/{id}/export`, as a download, with the signed-in
//! admin's session.

use axum::{
    extract::{Path, State},
    http::{header, request::Parts, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use rapport_core::ids::CustomerId;
use rapport_core::{audit::ActorKind, model::Role, CoreError};

use crate::{
    http::{dashboard_user::dashboard_user, extract::actor},
    state::AppState,
};

/// `GET /inbox/{customerId}/export`.
pub async fn download(State(state): State<AppState>, Path(customer_id): Path<CustomerId>, parts: Parts) -> Response {
    let user = match dashboard_user(&state.services, &parts.headers, Role::Admin).await {
        Ok(user) => user,
        Err(refusal) => return refusal.into_response(),
    };
    let actor = actor(&parts, ActorKind::User, &user.id);
    match state
        .services
        .export_customer(&user.tenant_id, &customer_id, &actor)
        .await
    {
        Ok(export) => {
            let disposition = format!("attachment; filename=\"customer-{}.json\"", export.customer.id);
            ([(header::CONTENT_DISPOSITION, disposition)], Json(export)).into_response()
        }
        Err(CoreError::NotFound(_)) => (StatusCode::NOT_FOUND, "no such customer").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "customer export failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}
