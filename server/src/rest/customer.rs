//! `/customer`: customers (spec 2.1), their lookup by `externalId`, and assignment.
//!
//! Tags and language (our extensions, which routing rules read) are fields of the
//! customer: set them with create/override or `PUT /customer/{id}` (omitted, they
//! are kept), and find customers by tag with `GET /customer?tag=`. There is no
//! separate tag resource: one customer object, one way to change it, as for every
//! other field. The visitor script adds tags with `POST /widget/tags`.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::ids::CustomerId;
use rapport_core::{
    customers::{Assignment, Customer, CustomerFilter, CustomerIn},
    model::{Page, PageRequest},
    usecases::export::CustomerExport,
};
use serde::Deserialize;
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
        .routes(routes!(list_customers, create_customer))
        .routes(routes!(get_customer, update_customer, delete_customer))
        .routes(routes!(assign_customer))
        .routes(routes!(export_customer))
}

/// Paging and filters of the customer list (one flat query string). The paging
/// fields are spelled out rather than `#[serde(flatten)]`ed from `PageRequest`
/// because serde_urlencoded cannot parse numbers inside a flattened struct; the
/// user, appointment and audit lists do the same.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct CustomerQuery {
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Only the customer with this external id.
    external_id: Option<String>,
    /// Matches e-mail, first or last name.
    search: Option<String>,
    /// Only customers with this tag (the whole tag, exactly; blank: no filter).
    /// Our extension.
    tag: Option<String>,
}

/// List customers, newest first; `externalId` finds one by the client's own id,
/// `tag` those with a tag.
#[utoipa::path(get, path = "/customer", tag = "customer", params(CustomerQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Customer>), AuthErrors, InputErrors))]
async fn list_customers(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<CustomerQuery>,
) -> ApiResult<Json<Page<Customer>>> {
    let page = PageRequest {
        page_number: q.page_number,
        page_size: q.page_size,
        offset: q.offset,
    };
    let filter = CustomerFilter {
        external_id: q.external_id,
        search: q.search,
        tag: q.tag,
    };
    Ok(Json(
        state.services.list_customers(&auth.tenant_id, &filter, &page).await?,
    ))
}

/// Create a customer, or override an existing one by `id`. On an override an
/// omitted `tags` or `language` keeps the customer's.
#[utoipa::path(post, path = "/customer", tag = "customer", request_body = CustomerIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = Customer, description = "Created"), (status = 200, body = Customer, description = "Overridden"),
        AuthErrors, InputErrors, NotFoundError, ConflictError))]
async fn create_customer(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<CustomerIn>,
) -> ApiResult<(StatusCode, Json<Customer>)> {
    let status = if input.id.is_some() {
        StatusCode::OK
    } else {
        StatusCode::CREATED
    };
    Ok((
        status,
        Json(
            state
                .services
                .save_customer(&auth.tenant_id, input, &auth.actor)
                .await?,
        ),
    ))
}

/// Get a customer.
#[utoipa::path(get, path = "/customer/{id}", tag = "customer", params(("id" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Customer), AuthErrors, NotFoundError))]
async fn get_customer(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<CustomerId>,
) -> ApiResult<Json<Customer>> {
    Ok(Json(state.services.get_customer(&auth.tenant_id, &id).await?))
}

/// Replace a customer's fields; an omitted `tags` or `language` keeps the
/// customer's (`[]` and `""` remove them).
#[utoipa::path(put, path = "/customer/{id}", tag = "customer", params(("id" = String, Path, description = "Customer id")),
    request_body = CustomerIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Customer), AuthErrors, InputErrors, NotFoundError, ConflictError))]
async fn update_customer(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<CustomerId>,
    ApiJson(input): ApiJson<CustomerIn>,
) -> ApiResult<Json<Customer>> {
    Ok(Json(
        state
            .services
            .update_customer(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Delete a customer, erasing everything held about them: messages, notes,
/// files, ratings, recorded sessions, visits, page resources and script errors
/// of their visitor, calls and their recordings, mails to or about them,
/// webhook events about them not being sent right now, notifications, jobs
/// and routing decisions naming them. Reports keep their numbers without
/// them. Queues `customer.deleted` with the ids alone (`CustomerErased`);
/// audited as `customer.erase`.
#[utoipa::path(delete, path = "/customer/{id}", tag = "customer", params(("id" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Erased"), AuthErrors, NotFoundError))]
async fn delete_customer(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<CustomerId>,
) -> ApiResult<StatusCode> {
    state.services.erase_customer(&auth.tenant_id, &id, &auth.actor).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Everything held about a customer, as one JSON document to download (GDPR
/// access and portability): the customer, and every other record about them
/// by table (messages, notes, files with their bytes in base64, ratings,
/// recorded sessions, visits, page resources, script errors, calls and their
/// recordings, routing decisions, mails). Audited as `customer.export`.
#[utoipa::path(get, path = "/customer/{id}/export", tag = "customer", params(("id" = String, Path, description = "Customer id")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = CustomerExport, headers(("content-disposition" = String, description = "attachment; filename=\"customer-<id>.json\""))),
        AuthErrors, NotFoundError))]
async fn export_customer(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<CustomerId>,
) -> ApiResult<impl axum::response::IntoResponse> {
    let export = state
        .services
        .export_customer(&auth.tenant_id, &id, &auth.actor)
        .await?;
    let disposition = format!("attachment; filename=\"customer-{}.json\"", export.customer.id);
    Ok(([(axum::http::header::CONTENT_DISPOSITION, disposition)], Json(export)))
}

/// Assign a customer to a user (`userId`, an id or e-mail) or a team (`teamId`),
/// never both; omit both to unassign.
#[utoipa::path(post, path = "/customer/{id}/assign", tag = "customer", params(("id" = String, Path, description = "Customer id")),
    request_body = Assignment,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Customer), AuthErrors, InputErrors, NotFoundError))]
async fn assign_customer(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<CustomerId>,
    ApiJson(input): ApiJson<Assignment>,
) -> ApiResult<Json<Customer>> {
    Ok(Json(
        state
            .services
            .assign_customer(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}
