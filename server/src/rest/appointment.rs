//! `/appointment`: video-conference appointments (spec 2.11).

use axum::{
    extract::{Path, State},
    http::{HeaderMap, StatusCode},
    response::Response,
    Json,
};
use rapport_core::{
    appointments::{
        recordings::ConferenceRecording, Appointment, AppointmentFilter, AppointmentIn, AppointmentRecordPatch,
    },
    ids::AppointmentId,
    model::{Page, PageRequest},
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors, NotFoundError},
        extract::{ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_appointments, create_appointment))
        .routes(routes!(
            get_appointment,
            update_appointment,
            patch_appointment,
            delete_appointment
        ))
        .routes(routes!(list_recordings))
        .routes(routes!(download_recording))
}

/// Paging and time filter of the appointment list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct AppointmentQuery {
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Appointments starting at or after this time (RFC 3339).
    from: Option<chrono::DateTime<chrono::Utc>>,
    /// Appointments starting before this time (RFC 3339).
    to: Option<chrono::DateTime<chrono::Utc>>,
}

/// List appointments by start time.
#[utoipa::path(get, path = "/appointment", tag = "appointment", params(AppointmentQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<Appointment>), AuthErrors, InputErrors))]
async fn list_appointments(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<AppointmentQuery>,
) -> ApiResult<Json<Page<Appointment>>> {
    let page = PageRequest {
        page_number: q.page_number,
        page_size: q.page_size,
        offset: q.offset,
    };
    let filter = AppointmentFilter { from: q.from, to: q.to };
    Ok(Json(
        state
            .services
            .list_appointments(&auth.tenant_id, &filter, &page)
            .await?,
    ))
}

/// Create an appointment. The answer carries its id and join link.
#[utoipa::path(post, path = "/appointment", tag = "appointment", request_body = AppointmentIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = Appointment), AuthErrors, InputErrors))]
async fn create_appointment(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<AppointmentIn>,
) -> ApiResult<(StatusCode, Json<Appointment>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            state
                .services
                .create_appointment(&auth.tenant_id, input, &auth.actor)
                .await?,
        ),
    ))
}

/// Get an appointment.
#[utoipa::path(get, path = "/appointment/{appointmentId}", tag = "appointment",
    params(("appointmentId" = String, Path, description = "The appointment")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Appointment), AuthErrors, NotFoundError))]
async fn get_appointment(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<AppointmentId>,
) -> ApiResult<Json<Appointment>> {
    Ok(Json(state.services.get_appointment(&auth.tenant_id, &id).await?))
}

/// Update an appointment: replaces it whole (`title` required); an omitted
/// `password` keeps the current one; the join link stays.
#[utoipa::path(put, path = "/appointment/{appointmentId}", tag = "appointment",
    params(("appointmentId" = String, Path, description = "The appointment to update")), request_body = AppointmentIn,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Appointment), AuthErrors, InputErrors, NotFoundError))]
async fn update_appointment(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<AppointmentId>,
    ApiJson(input): ApiJson<AppointmentIn>,
) -> ApiResult<Json<Appointment>> {
    Ok(Json(
        state
            .services
            .update_appointment(&auth.tenant_id, &id, input, &auth.actor)
            .await?,
    ))
}

/// Update appointment properties: switch automatic recording.
#[utoipa::path(patch, path = "/appointment/{appointmentId}", tag = "appointment",
    params(("appointmentId" = String, Path, description = "The appointment")), request_body = AppointmentRecordPatch,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Appointment), AuthErrors, InputErrors, NotFoundError))]
async fn patch_appointment(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<AppointmentId>,
    ApiJson(input): ApiJson<AppointmentRecordPatch>,
) -> ApiResult<Json<Appointment>> {
    Ok(Json(
        state
            .services
            .set_appointment_record(&auth.tenant_id, &id, input.record, &auth.actor)
            .await?,
    ))
}

/// Delete an appointment; its join link stops working.
#[utoipa::path(delete, path = "/appointment/{appointmentId}", tag = "appointment",
    params(("appointmentId" = String, Path, description = "The appointment")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError))]
async fn delete_appointment(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<AppointmentId>,
) -> ApiResult<StatusCode> {
    state
        .services
        .delete_appointment(&auth.tenant_id, &id, &auth.actor)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The recordings of an appointment's calls, oldest first: one WebM file per
/// participant and camera (with their sound) or shared screen, made while
/// `record` was on.
#[utoipa::path(get, path = "/appointment/{appointmentId}/recording", tag = "appointment",
    params(("appointmentId" = String, Path, description = "The appointment")),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Vec<ConferenceRecording>), AuthErrors, NotFoundError))]
async fn list_recordings(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<AppointmentId>,
) -> ApiResult<Json<Vec<ConferenceRecording>>> {
    Ok(Json(
        state.services.list_conference_recordings(&auth.tenant_id, &id).await?,
    ))
}

/// Download one recording (`video/webm`, named in `Content-Disposition`). A
/// single byte range (`Range: bytes=start-end`, `bytes=start-` or
/// `bytes=-suffix`; of a list, the first) is answered with 206 and
/// `Content-Range`; a range that starts past the end, or an empty suffix
/// (`bytes=-0`), with 416; a `Range` that cannot be read is ignored (200, the
/// whole file).
#[utoipa::path(get, path = "/appointment/{appointmentId}/recording/{recordingId}", tag = "appointment",
    params(
        ("appointmentId" = String, Path, description = "The appointment"),
        ("recordingId" = String, Path, description = "The recording"),
        ("Range" = Option<String>, Header, description = "One byte range, e.g. `bytes=0-1048575`"),
    ),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses(
        (status = 200, description = "The WebM file", content_type = "video/webm", body = Vec<u8>),
        (status = 206, description = "The asked byte range", content_type = "video/webm", body = Vec<u8>),
        (status = 416, description = "The range starts past the end of the file, or is an empty suffix (`range_not_satisfiable`, with `Content-Range: bytes */size`)",
            content_type = "application/problem+json", body = crate::http::error::Problem),
        AuthErrors, NotFoundError))]
async fn download_recording(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path((id, recording_id)): Path<(AppointmentId, String)>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let recording = state
        .services
        .conference_recording(&auth.tenant_id, &id, &recording_id)
        .await?;
    Ok(crate::http::call_recordings::webm_response(
        state.services.clone(),
        &recording,
        &headers,
    ))
}
