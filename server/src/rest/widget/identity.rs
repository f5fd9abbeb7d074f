//! The visitor script names its visitor, and admins set how that naming is
//! trusted: the identity settings and their signing secret.

use axum::{extract::State, Json};
use rapport_core::{
    conversations::{VisitorProfile, VisitorProfileIn},
    customers::{IdentitySettings, IdentitySettingsIn},
};

use super::Visitor;
use crate::{
    http::{
        error::{ApiResult, AuthErrors, ConflictError, InputErrors},
        extract::{ApiJson, TenantAuth},
    },
    state::AppState,
};

/// The visitor script names its visitor (`Rapport.identify`): the profile's fields
/// replace the customer's, fields left out are kept, and so are its assignment
/// and tags (`id`, `assignedUser`, `assignedTeam` and `tags` are ignored).
/// `customer.updated` fires.
///
/// `externalId` and `email` become the customer's only with a valid
/// `identitySignature` (identity verification, `GET /widget/identity`); without
/// one they are kept as `claimedExternalId` and `claimedEmail`, or refused with
/// 422 `signature_required` where the workspace requires signatures. A wrong
/// signature is 422 `signature_mismatch`. A signed `externalId` that another
/// customer has makes the visitor that customer: its token stands for it from
/// now on, and the answer names it.
#[utoipa::path(post, path = "/widget/profile", tag = "widget", request_body = VisitorProfileIn,
    security(("widgetKey" = [], "visitorToken" = [])),
    responses((status = 200, body = VisitorProfile), AuthErrors, InputErrors, ConflictError))]
pub(super) async fn identify(
    visitor: Visitor,
    State(state): State<AppState>,
    ApiJson(profile): ApiJson<VisitorProfileIn>,
) -> ApiResult<Json<VisitorProfile>> {
    Ok(Json(
        state
            .services
            .identify_visitor(
                &visitor.tenant_id,
                &visitor.customer_id,
                &visitor.token,
                profile,
                &visitor.actor,
            )
            .await?,
    ))
}

/// The workspace's identity verification: whether unsigned visitor identities
/// are refused, and the secret its site signs them with. A site signs a
/// signed-in visitor's `externalId` and `email` on its server (lowercase hex
/// HMAC-SHA256 over `externalId`, a line feed and `email`, each as the widget
/// sends them, empty when left out) and passes the result to
/// `Rapport('identify', {…, identitySignature})`.
#[utoipa::path(get, path = "/widget/identity", tag = "widget",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = IdentitySettings), AuthErrors))]
pub(super) async fn get_identity(auth: TenantAuth, State(state): State<AppState>) -> ApiResult<Json<IdentitySettings>> {
    Ok(Json(state.services.identity_settings(&auth.tenant_id).await?))
}

/// Turn the refusal of unsigned visitor identities on or off. On makes a
/// secret if the workspace has none.
#[utoipa::path(put, path = "/widget/identity", tag = "widget", request_body = IdentitySettingsIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = IdentitySettings), AuthErrors, InputErrors))]
pub(super) async fn put_identity(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<IdentitySettingsIn>,
) -> ApiResult<Json<IdentitySettings>> {
    Ok(Json(
        state
            .services
            .set_identity_settings(&auth.tenant_id, input, &auth.actor)
            .await?,
    ))
}

/// Replace the identity secret. Signatures made with the old one are refused
/// from now on, so deploy the new one to the site at once.
#[utoipa::path(post, path = "/widget/identity/rotate", tag = "widget",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = IdentitySettings), AuthErrors))]
pub(super) async fn rotate_identity_secret(
    auth: TenantAuth,
    State(state): State<AppState>,
) -> ApiResult<Json<IdentitySettings>> {
    Ok(Json(
        state
            .services
            .rotate_identity_secret(&auth.tenant_id, &auth.actor)
            .await?,
    ))
}
