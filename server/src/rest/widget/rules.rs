//! The workspace's action rules as the visitor script evaluates them.

use axum::{
    extract::State,
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
    Json,
};
use rapport_core::config::rules::action::{CompiledRules, COMPILED_MAX_AGE_SECONDS};

use super::AnonymousVisitor;
use crate::{
    http::error::{ApiResult, AuthErrors},
    state::AppState,
};

/// The workspace's active action rules, compiled for the visitor's browser,
/// which evaluates them itself (so a page view costs the server nothing):
/// opening hours and time windows become the UTC intervals they are open in
/// over the next days, and a flow its messages. The agent conditions read
/// `GET /widget/config`'s `agents`. The script keeps this for `maxAgeSeconds`
/// (the answer says the same in `Cache-Control`) and reports each match in its
/// tracking batches (`ACTION_RULE_MATCH`, `POST /widget/track`).
#[utoipa::path(get, path = "/widget/rules", tag = "widget",
    security(("widgetKey" = [])),
    responses((status = 200, body = CompiledRules,
        headers(("Cache-Control" = String, description = "private, max-age=300"))), AuthErrors))]
pub(super) async fn rules(State(state): State<AppState>, parts: AnonymousVisitor) -> ApiResult<Response> {
    let tenant_id = state.services.tenant_by_widget_key(&parts.widget_key).await?;
    let compiled = state
        .services
        .compiled_action_rules(&tenant_id, chrono::Utc::now())
        .await?;
    let mut response = Json(compiled).into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&format!("private, max-age={COMPILED_MAX_AGE_SECONDS}")) {
        headers.insert(header::CACHE_CONTROL, value);
    }
    // Sites of two workspaces on one Rapport share the address.
    headers.insert(header::VARY, HeaderValue::from_static(super::WIDGET_KEY_HEADER));
    Ok(response)
}
