//! `/audit`: the user-activity log. Every write through the API or the dashboard is
//! recorded with its actor, action, object, time, client IP and request id.

use axum::{extract::State, Json};
use rapport_core::{
    audit::{AuditEntry, AuditFilter},
    model::{Page, PageRequest},
};
use serde::Deserialize;
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors},
        extract::{ApiQuery, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list_audit))
}

/// Paging and filters of the audit log (one flat query string).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct AuditQuery {
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
    /// Entries at or after this time (RFC 3339).
    from: Option<chrono::DateTime<chrono::Utc>>,
    /// Entries before this time (RFC 3339).
    to: Option<chrono::DateTime<chrono::Utc>>,
    /// Only this actor: a user id or an API key id.
    actor: Option<String>,
    /// Only this action, e.g. `user.create`, or all of a resource: `user.*`.
    action: Option<String>,
}

/// List the tenant's audit log, newest first.
#[utoipa::path(get, path = "/audit", tag = "audit", params(AuditQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<AuditEntry>), AuthErrors, InputErrors))]
async fn list_audit(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<AuditQuery>,
) -> ApiResult<Json<Page<AuditEntry>>> {
    let page = PageRequest {
        page_number: q.page_number,
        page_size: q.page_size,
        offset: q.offset,
    };
    let filter = AuditFilter {
        from: q.from,
        to: q.to,
        actor: q.actor,
        action: q.action,
    };
    Ok(Json(state.services.list_audit(&auth.tenant_id, &filter, &page).await?))
}
