//! `/webhook`: subscriptions, their secrets, the delivery log, replay and test
//! events. How deliveries are made is documented in `crate::webhooks`.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    ids::WebhookId,
    model::{Page, PageRequest},
    webhooks::{
        deliveries::{event_catalogue, Attempt, Delivery},
        RotateSecretIn, WebhookEndpoint, WebhookIn, WebhookWithSecret,
    },
};
use serde::Serialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, ConflictError, InputErrors, NotFoundError},
        extract::{ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_webhooks, create_webhook))
        .routes(routes!(event_types))
        .routes(routes!(get_webhook, update_webhook, delete_webhook))
        .routes(routes!(rotate_secret))
        .routes(routes!(send_test))
        .routes(routes!(list_deliveries))
        .routes(routes!(list_attempts))
        .routes(routes!(replay))
}

const ID: &str = "Webhook subscription id";

/// An event type and what it carries.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct EventTypeInfo {
    /// Wire name, as in the `rapport-event-type` header and (all but `webhook.test`)
    /// in `eventTypes`.
    #[schema(value_type = rapport_core::events::EventType)]
    name: String,
    /// When it fires and what its body is.
    description: String,
}

/// A queued event.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct Queued {
    /// The event id, sent as `webhook-id`.
    event_id: String,
}

/// List subscriptions.
#[utoipa::path(get, path = "/webhook", tag = "webhook", params(PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<WebhookEndpoint>), AuthErrors, InputErrors))]
async fn list_webhooks(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<WebhookEndpoint>>> {
    Ok(Json(state.services.list_webhooks(&auth.tenant_id, &page).await?))
}

/// Subscribe an endpoint. The answer holds the signing secret (`whsec_…`), shown
/// only here. Deliveries are signed per Standard Webhooks v1.
#[utoipa::path(post, path = "/webhook", tag = "webhook", request_body = WebhookIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = WebhookWithSecret), AuthErrors, InputErrors))]
async fn create_webhook(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<WebhookIn>,
) -> ApiResult<(StatusCode, Json<WebhookWithSecret>)> {
    let created = state
        .services
        .create_webhook(&auth.tenant_id, input, &auth.actor)
        .await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// The event types, with when each fires and what its body is.
#[utoipa::path(get, path = "/webhook/eventtypes", tag = "webhook",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Vec<EventTypeInfo>), AuthErrors))]
async fn event_types(_auth: TenantAuth) -> Json<Vec<EventTypeInfo>> {
    Json(
        event_catalogue()
            .into_iter()
            .map(|(t, what)| EventTypeInfo {
                name: t.as_str().to_string(),
                description: what.to_string(),
            })
            .collect(),
    )
}

/// Get a subscription (without its secret).
#[utoipa::path(get, path = "/webhook/{id}", tag = "webhook", params(("id" = String, Path, description = ID)),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = WebhookEndpoint), AuthErrors, NotFoundError))]
async fn get_webhook(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
) -> ApiResult<Json<WebhookEndpoint>> {
    Ok(Json(state.services.get_webhook(&auth.tenant_id, &id).await?))
}

/// Replace a subscription's URL, description, event filter and enabled flag.
/// A disabled endpoint gets no events of the time it was disabled; enabling it
/// sends the retries that were pending when it was disabled.
#[utoipa::path(put, path = "/webhook/{id}", tag = "webhook", request_body = WebhookIn,
    params(("id" = String, Path, description = ID)),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = WebhookEndpoint), AuthErrors, InputErrors, NotFoundError))]
async fn update_webhook(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
    ApiJson(input): ApiJson<WebhookIn>,
) -> ApiResult<Json<WebhookEndpoint>> {
    Ok(Json(
        state
            .services
            .update_webhook(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Delete a subscription, its queue and its log.
#[utoipa::path(delete, path = "/webhook/{id}", tag = "webhook", params(("id" = String, Path, description = ID)),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError))]
async fn delete_webhook(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
) -> ApiResult<StatusCode> {
    state.services.delete_webhook(&auth.tenant_id, &id, &auth.actor).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Rotate the signing secret. The new one is in this answer only; the previous one
/// keeps signing beside it for `overlapSeconds` (default 24 h), so each delivery
/// then carries two signatures.
#[utoipa::path(post, path = "/webhook/{id}/secret/rotate", tag = "webhook", request_body = RotateSecretIn,
    params(("id" = String, Path, description = ID)),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = WebhookWithSecret), AuthErrors, InputErrors, NotFoundError))]
async fn rotate_secret(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
    ApiJson(input): ApiJson<RotateSecretIn>,
) -> ApiResult<Json<WebhookWithSecret>> {
    Ok(Json(
        state
            .services
            .rotate_webhook_secret(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Queue a `webhook.test` event to this endpoint, whatever its filter.
#[utoipa::path(post, path = "/webhook/{id}/test", tag = "webhook", params(("id" = String, Path, description = ID)),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 202, body = Queued), AuthErrors, NotFoundError))]
async fn send_test(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
) -> ApiResult<(StatusCode, Json<Queued>)> {
    let event_id = state
        .services
        .send_test_event(&auth.tenant_id, &id, &auth.actor)
        .await?;
    Ok((StatusCode::ACCEPTED, Json(Queued { event_id })))
}

/// The subscription's deliveries (one per event), newest first, with their state.
#[utoipa::path(get, path = "/webhook/{id}/delivery", tag = "webhook",
    params(("id" = String, Path, description = ID), PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Delivery>), AuthErrors, InputErrors, NotFoundError))]
async fn list_deliveries(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Delivery>>> {
    Ok(Json(state.services.list_deliveries(&auth.tenant_id, &id, &page).await?))
}

/// The delivery log: every attempt, newest first, with its time, status, latency
/// and the start of the answer.
#[utoipa::path(get, path = "/webhook/{id}/attempt", tag = "webhook",
    params(("id" = String, Path, description = ID), PageRequest),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Attempt>), AuthErrors, InputErrors, NotFoundError))]
async fn list_attempts(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<WebhookId>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Attempt>>> {
    Ok(Json(state.services.list_attempts(&auth.tenant_id, &id, &page).await?))
}

/// Send a delivery again, with its original `webhook-id`, on a fresh retry schedule.
#[utoipa::path(post, path = "/webhook/{id}/delivery/{deliveryId}/replay", tag = "webhook",
    params(("id" = String, Path, description = ID), ("deliveryId" = String, Path, description = "Delivery id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 202, description = "Queued"), AuthErrors, NotFoundError, ConflictError))]
async fn replay(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path((id, delivery_id)): Path<(WebhookId, String)>,
) -> ApiResult<StatusCode> {
    state
        .services
        .replay_delivery(&auth.tenant_id, &id, &delivery_id, &auth.actor)
        .await?;
    Ok(StatusCode::ACCEPTED)
}
