//! The routing engine's side of the API: the order routing rules are tried in
//! (`PUT /rule/routing/order`), and the match log, per rule
//! (`GET /rule/routing/{id}/match`) and per conversation
//! (`GET /conversation/{customerId}/routing`). The rules themselves are CRUD in
//! [`super::config`].

use axum::{
    extract::{Path, State},
    Json,
};
use rapport_core::ids::CustomerId;
use rapport_core::{config::rules::RoutingRule, model::RoutingRecord, validate::Checks};
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
        .routes(routes!(reorder))
        .routes(routes!(rule_matches))
        .routes(routes!(conversation_routing))
}

/// Decisions a log read returns when `limit` is not given.
const DEFAULT_LIMIT: i64 = 50;
/// The most decisions a log read returns.
const MAX_LIMIT: i64 = 200;

/// The order to try the routing rules in.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"ids": ["0196f0c2-7a1e-7c3a-9a51-2f6f5a0b1c2d", "0196f0c2-7a1e-7c3a-9a51-2f6f5a0b1c2e"]}))]
struct RuleOrder {
    /// Every routing rule's id, each once, first tried first.
    #[schema(min_items = 1)]
    ids: Vec<String>,
}

/// How many decisions to return.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
struct LogQuery {
    /// At most this many decisions, newest first: 1–200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    limit: Option<i64>,
}

impl LogQuery {
    /// The limit, or 422 on `limit` outside 1–200.
    fn limit(&self) -> ApiResult<i64> {
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        let mut checks = Checks::new();
        checks.in_range("limit", limit, 1..=MAX_LIMIT);
        checks.finish()?;
        Ok(limit)
    }
}

/// Set the order routing rules are tried in. `ids` lists every routing rule of the
/// tenant once, applied or not, first tried first; their `priority` becomes 10,
/// 20, 30… in that order, all at once. An id that is not one of the tenant's rules
/// is a 404; a list that leaves a rule out or names one twice is a 422 on `ids`.
/// Answers the rules in their new order.
#[utoipa::path(put, path = "/rule/routing/order", tag = "rule", request_body = RuleOrder,
    summary = "Set the order routing rules are tried in",
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Vec<RoutingRule>, description = "The rules, first tried first"),
        AuthErrors, InputErrors, NotFoundError))]
async fn reorder(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<RuleOrder>,
) -> ApiResult<Json<Vec<RoutingRule>>> {
    Ok(Json(
        state
            .services
            .reorder_routing_rules(&auth.tenant_id, &input.ids, &auth.actor)
            .await?,
    ))
}

/// A routing rule's recent matches: the routing decisions in which it (or one of
/// its else-rules) matched, newest first. Empty for a rule that never matched.
#[utoipa::path(get, path = "/rule/routing/{id}/match", tag = "rule",
    summary = "A routing rule's recent matches",
    params(("id" = String, Path, description = "Routing rule id"), LogQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Vec<RoutingRecord>, description = "Decisions, newest first"),
        AuthErrors, InputErrors, NotFoundError))]
async fn rule_matches(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<LogQuery>,
) -> ApiResult<Json<Vec<RoutingRecord>>> {
    let limit = query.limit()?;
    // Another tenant's rule gets the same 404 as an unknown one.
    state.services.config_get::<RoutingRule>(&auth.tenant_id, &id).await?;
    Ok(Json(
        state.services.routing_log_of_rule(&auth.tenant_id, &id, limit).await?,
    ))
}

/// Why a conversation went where it went: its routing decisions, newest first,
/// each with the reason routing ran, the rules tried, the one that matched, the
/// actions taken and the result.
#[utoipa::path(get, path = "/conversation/{customerId}/routing", tag = "conversation",
    summary = "A conversation's routing decisions",
    params(("customerId" = String, Path, description = "Customer id"), LogQuery),
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 200, body = Vec<RoutingRecord>, description = "Decisions, newest first"),
        AuthErrors, InputErrors, NotFoundError))]
async fn conversation_routing(
    auth: TenantAuth,
    State(state): State<AppState>,
    Path(customer_id): Path<CustomerId>,
    ApiQuery(query): ApiQuery<LogQuery>,
) -> ApiResult<Json<Vec<RoutingRecord>>> {
    let limit = query.limit()?;
    state.services.get_customer(&auth.tenant_id, &customer_id).await?;
    Ok(Json(
        state
            .services
            .routing_log_of_conversation(&auth.tenant_id, &customer_id, limit)
            .await?,
    ))
}
