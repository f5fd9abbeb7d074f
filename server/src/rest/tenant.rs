//! `/tenant`: tenant management with a platform key; `/workspace`: the API key's
//! own tenant and its settings, with a tenant key.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    ids::TenantId,
    limits::{TenantLimits, TenantLimitsIn},
    model::{Page, PageRequest, Tenant},
    tenants::{NewTenant, TenantUpdate},
};
use serde::{Deserialize, Serialize};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, ConflictError, InputErrors, NotFoundError},
        extract::{ApiJson, ApiQuery, PlatformAuth, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_tenants, create_tenant))
        .routes(routes!(get_tenant, update_tenant, delete_tenant))
        .routes(routes!(get_limits, set_limits))
        .routes(routes!(get_workspace, update_workspace))
}

/// Changes to the API key's own tenant; omitted fields keep their value. The
/// handle (`slug`) is changed with a platform key only.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"language": "de", "maxChats": 3, "businessHoursId": "0190f0c8-61a4-7c55-9a8e-0c7f1d3b9a21"}))]
pub struct WorkspaceUpdate {
    /// New display name (not blank, at most 200 characters).
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// New IANA time zone (reports are cut in it).
    #[schema(example = "Europe/Berlin")]
    pub timezone: Option<String>,
    /// New default language: a BCP 47 tag such as `en` or `de-CH` (at most 35
    /// characters). System messages go out in it when none exists in the
    /// customer's language.
    #[schema(max_length = 35, example = "de")]
    pub language: Option<String>,
    /// New default agent capacity: how many open conversations an agent without a
    /// `maxConcurrentChats` of their own is given at once, 1–100.
    #[schema(minimum = 1, maximum = 100, example = 5)]
    pub max_chats: Option<i64>,
    /// Id of the tenant's business hours: SLA clocks count only while they are
    /// open, and outside them the chat shows its offline form and visitors
    /// cannot ask for a call (409 `closed`). `null`: open around the clock;
    /// omitted keeps the current.
    #[serde(default, deserialize_with = "rapport_core::tenants::present")]
    #[schema(value_type = Option<String>)]
    pub business_hours_id: Option<Option<String>>,
    /// Whether the chat asks visitors to rate a conversation once it is closed
    /// (`DONE`): 1–5 stars and a comment (`POST /widget/csat`).
    pub csat_enabled: Option<bool>,
    /// Whether agents see what a visitor types before sending it (the draft
    /// of `POST /widget/typing`, in the inbox's live events); off, they see
    /// only that the visitor is typing.
    pub typing_preview: Option<bool>,
    /// Whether a conversation's transcript is mailed to the customer's `email`
    /// when it is marked done (visitors can always ask for one, `POST
    /// /widget/transcript`).
    pub transcript_on_close: Option<bool>,
    /// After how many minutes an agent's reply that no page has carried (the
    /// visitor has left) goes by mail to the customer's `email`, or to the
    /// address of their offline form, with a link that continues the chat:
    /// 0–1440, 0 never (default 5).
    #[schema(minimum = 0, maximum = 1440, example = 5)]
    pub reply_by_mail_minutes: Option<i64>,
}

/// The API key's own tenant, with its settings.
#[utoipa::path(get, path = "/workspace", tag = "workspace",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Tenant), AuthErrors))]
async fn get_workspace(auth: TenantAuth, State(state): State<AppState>) -> ApiResult<Json<Tenant>> {
    Ok(Json(state.services.get_tenant(&auth.tenant_id).await?))
}

/// Change the API key's own tenant: name, time zone, default language, default
/// agent capacity, business hours. A `businessHoursId` that names no opening hours
/// of the tenant is a 422 (`unknown_reference`).
#[utoipa::path(put, path = "/workspace", tag = "workspace", request_body = WorkspaceUpdate,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Tenant), AuthErrors, InputErrors))]
async fn update_workspace(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<WorkspaceUpdate>,
) -> ApiResult<Json<Tenant>> {
    let update = TenantUpdate {
        name: input.name,
        slug: None,
        timezone: input.timezone,
        language: input.language,
        max_chats: input.max_chats,
        business_hours_id: input.business_hours_id,
        csat_enabled: input.csat_enabled,
        typing_preview: input.typing_preview,
        transcript_on_close: input.transcript_on_close,
        reply_by_mail_minutes: input.reply_by_mail_minutes,
    };
    Ok(Json(
        state
            .services
            .update_tenant(&auth.tenant_id, update, &auth.actor)
            .await?,
    ))
}

/// A new tenant, optionally with its first admin.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantIn {
    /// Display name (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// Unique handle: 2–63 of `a-z`, `0-9` and `-`, not starting with `-`. Derived
    /// from the name when omitted (`tenant-…` when the name has too few letters).
    #[schema(
        min_length = 2,
        max_length = 63,
        pattern = "^[a-z0-9][a-z0-9-]*$",
        example = "acme-support"
    )]
    pub slug: Option<String>,
    /// IANA time zone; default `UTC`.
    #[schema(example = "Europe/Berlin")]
    pub timezone: Option<String>,
    /// E-mail of a first admin to create in the tenant.
    #[schema(format = Email, max_length = 254)]
    pub admin_email: Option<String>,
    /// That admin's password (8–256 characters); generated and returned once when
    /// omitted. Only read with `adminEmail`.
    #[schema(min_length = 8, max_length = 256)]
    pub admin_password: Option<String>,
}

/// A created tenant, with its first admin when one was asked for.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantCreated {
    /// The tenant.
    #[serde(flatten)]
    pub tenant: Tenant,
    /// The first admin.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_admin: Option<InitialAdmin>,
}

/// The first admin of a new tenant.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitialAdmin {
    /// The admin's e-mail.
    pub email: String,
    /// The generated password, shown only here; absent when it was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generated_password: Option<String>,
}

/// List tenants, oldest first.
#[utoipa::path(get, path = "/tenant", tag = "tenant", params(PageRequest),
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 200, body = Page<Tenant>), AuthErrors, InputErrors))]
async fn list_tenants(
    _auth: PlatformAuth,
    State(state): State<AppState>,
    ApiQuery(page): ApiQuery<PageRequest>,
) -> ApiResult<Json<Page<Tenant>>> {
    Ok(Json(state.services.list_tenants(&page).await?))
}

/// Create a tenant, optionally with its first admin.
#[utoipa::path(post, path = "/tenant", tag = "tenant", request_body = TenantIn,
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 201, body = TenantCreated), AuthErrors, InputErrors, ConflictError))]
async fn create_tenant(
    auth: PlatformAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<TenantIn>,
) -> ApiResult<(StatusCode, Json<TenantCreated>)> {
    let new = NewTenant {
        name: input.name,
        slug: input.slug,
        timezone: input.timezone,
    };
    let (tenant, admin) = state
        .services
        .create_tenant_with_admin(
            new,
            input.admin_email.as_deref(),
            input.admin_password.as_deref(),
            &auth.actor,
        )
        .await?;
    let initial_admin = admin.map(|a| InitialAdmin {
        email: a.email,
        generated_password: a.generated_password,
    });
    Ok((StatusCode::CREATED, Json(TenantCreated { tenant, initial_admin })))
}

/// Get one tenant.
#[utoipa::path(get, path = "/tenant/{id}", tag = "tenant", params(("id" = String, Path, description = "Tenant id")),
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 200, body = Tenant), AuthErrors, NotFoundError))]
async fn get_tenant(
    _auth: PlatformAuth,
    State(state): State<AppState>,
    Path(id): Path<TenantId>,
) -> ApiResult<Json<Tenant>> {
    Ok(Json(state.services.get_tenant(&id).await?))
}

/// Update a tenant's name, slug, time zone, default language, default agent
/// capacity or business hours; omitted fields keep their value.
#[utoipa::path(put, path = "/tenant/{id}", tag = "tenant", params(("id" = String, Path, description = "Tenant id")),
    request_body = TenantUpdate,
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 200, body = Tenant), AuthErrors, InputErrors, NotFoundError, ConflictError))]
async fn update_tenant(
    auth: PlatformAuth,
    State(state): State<AppState>,
    Path(id): Path<TenantId>,
    ApiJson(input): ApiJson<TenantUpdate>,
) -> ApiResult<Json<Tenant>> {
    Ok(Json(state.services.update_tenant(&id, input, &auth.actor).await?))
}

/// Delete a tenant and all its data. Refused while it holds the last platform admin.
#[utoipa::path(delete, path = "/tenant/{id}", tag = "tenant", params(("id" = String, Path, description = "Tenant id")),
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError, ConflictError))]
async fn delete_tenant(
    auth: PlatformAuth,
    State(state): State<AppState>,
    Path(id): Path<TenantId>,
) -> ApiResult<StatusCode> {
    state.services.delete_tenant(&id, &auth.actor).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A tenant's bounds on what its visitors' pages make the server keep (README,
/// "Security"): its own where a platform admin set them, else the defaults.
#[utoipa::path(get, path = "/tenant/{id}/limits", tag = "tenant", params(("id" = String, Path, description = "Tenant id")),
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 200, body = TenantLimits), AuthErrors, NotFoundError))]
async fn get_limits(
    _auth: PlatformAuth,
    State(state): State<AppState>,
    Path(id): Path<TenantId>,
) -> ApiResult<Json<TenantLimits>> {
    state.services.get_tenant(&id).await?;
    Ok(Json(state.services.tenant_limits(&id).await?))
}

/// Set a tenant's bounds; omitted fields keep their value, `null` returns one
/// to its default. Only a platform key may: a tenant cannot raise its own.
#[utoipa::path(put, path = "/tenant/{id}/limits", tag = "tenant", params(("id" = String, Path, description = "Tenant id")),
    request_body = TenantLimitsIn,
    security(("platformKey" = []), ("platformKeyQuery" = [])),
    responses((status = 200, body = TenantLimits), AuthErrors, InputErrors, NotFoundError))]
async fn set_limits(
    auth: PlatformAuth,
    State(state): State<AppState>,
    Path(id): Path<TenantId>,
    ApiJson(input): ApiJson<TenantLimitsIn>,
) -> ApiResult<Json<TenantLimits>> {
    Ok(Json(state.services.set_tenant_limits(&id, input, &auth.actor).await?))
}
