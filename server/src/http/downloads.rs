//! Dashboard downloads: a report page's numbers as CSV, for the signed-in
//! supervisor (session cookie), computed exactly as `?format=csv` on the REST
//! report operation.

use axum::{
    extract::{Path, Query, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
};
use rapport_app::api::reports::view::ReportQuery;
use rapport_core::{model::Role, CoreError};
use serde::Deserialize;

use crate::{http::dashboard_user::dashboard_user, state::AppState};

/// The page's query string.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct CsvQuery {
    grouping: String,
    from: String,
    to: String,
    by_agent: String,
}

/// `GET /reports/{family}/csv?grouping=…`.
pub async fn report_csv(
    State(state): State<AppState>,
    Path(family): Path<String>,
    Query(query): Query<CsvQuery>,
    headers: HeaderMap,
) -> Response {
    let user = match dashboard_user(&state.services, &headers, Role::Supervisor).await {
        Ok(user) => user,
        Err(refusal) => return refusal.into_response(),
    };
    let query = ReportQuery {
        family,
        grouping: query.grouping,
        from: query.from,
        to: query.to,
        by_agent: query.by_agent,
    };
    match rapport_app::reports::csv(&state.services, &user.tenant_id, &query).await {
        Ok((name, body)) => (
            [
                (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
            ],
            body,
        )
            .into_response(),
        Err(err) => failure(err),
    }
}

fn failure(err: CoreError) -> Response {
    match err {
        CoreError::NotFound(_) => (StatusCode::NOT_FOUND, "no such report").into_response(),
        CoreError::Validation(fields) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            fields
                .iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect::<Vec<_>>()
                .join("\n"),
        )
            .into_response(),
        other => {
            tracing::error!(error = %other, "report download failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "the report could not be computed").into_response()
        }
    }
}
