//! `/search`: full-text search across the tenant's customers and message text
//! (our extension; see `rapport_core::search`).

use axum::{extract::State, Json};
use rapport_core::{
    conversations::ConversationStatus,
    model::{Page, PageRequest},
    search::{SearchHit, SearchQuery},
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
    OpenApiRouter::new().routes(routes!(search))
}

/// The words, the filters and the page of a search.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
struct SearchParams {
    /// The words (letters and digits; anything else separates them; at most 8
    /// are used). Each matches the start of a word, and all must match; a query
    /// without a word finds nothing.
    #[param(max_length = 500, example = "refund 1182")]
    q: String,
    /// Only conversations with this status.
    status: Option<ConversationStatus>,
    /// Only customers assigned to this user (id).
    agent: Option<String>,
    /// Only customers with this tag (theirs or their page's).
    tag: Option<String>,
    /// Only hits at or after this time (RFC 3339): a message's time, a customer's creation.
    from: Option<chrono::DateTime<chrono::Utc>>,
    /// Only hits before this time (RFC 3339).
    to: Option<chrono::DateTime<chrono::Utc>>,
    /// Page to return, from 0.
    #[param(minimum = 0)]
    page_number: Option<i64>,
    /// Items per page, 1–200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    page_size: Option<i64>,
    /// Items to skip; overrides `pageNumber`.
    #[param(minimum = 0)]
    offset: Option<i64>,
}

/// Search customers (names, e-mail, external id) and message text, best match
/// first, then newest. Each hit names its conversation and carries the matched
/// passage with the matched words' places.
#[utoipa::path(get, path = "/search", tag = "customer", params(SearchParams),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Page<SearchHit>), AuthErrors, InputErrors))]
async fn search(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiQuery(p): ApiQuery<SearchParams>,
) -> ApiResult<Json<Page<SearchHit>>> {
    let query = SearchQuery {
        q: p.q,
        status: p.status,
        agent: p.agent,
        tag: p.tag,
        from: p.from.map(|t| t.timestamp_millis()),
        to: p.to.map(|t| t.timestamp_millis()),
    };
    let page = PageRequest {
        page_number: p.page_number,
        page_size: p.page_size,
        offset: p.offset,
    };
    Ok(Json(state.services.search(&auth.tenant_id, &query, &page).await?))
}
