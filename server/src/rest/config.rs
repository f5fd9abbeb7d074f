//! The tenant settings objects (opening hours, system messages, flows, watchdogs,
//! routing, SLA and action rules) share one shape of API, generated here: list (paged), create or
//! override (`POST`, an existing `id` overrides), get, replace (`PUT`), delete.

use axum::{
    extract::{Path, State},
    http::StatusCode,
    Json,
};
use rapport_core::{
    config::{
        flows::Flow,
        opening_hours::OpeningHours,
        rules::{action::ActionRule, RoutingRule, SlaRule},
        system_messages::SystemMessage,
        watchdogs::Watchdog,
    },
    model::{Page, PageRequest},
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, ConflictError, InputErrors, NotFoundError},
        extract::{ApiJson, ApiQuery, TenantAuth},
    },
    state::AppState,
};

macro_rules! config_resource {
    (
        $module:ident, $kind:ty, tag = $tag:literal, collection = $collection:literal, item = $item:literal,
        save = $save:ident, delete = $delete:ident,
        list = $list_summary:literal, create = $create_summary:literal, get = $get_summary:literal,
        update = $update_summary:literal, remove = $remove_summary:literal $(,)?
    ) => {
        pub mod $module {
            use super::*;

            pub fn router() -> OpenApiRouter<AppState> {
                OpenApiRouter::new().routes(routes!(list, create)).routes(routes!(get, update, remove))
            }

            #[utoipa::path(get, path = $collection, tag = $tag, summary = $list_summary, params(PageRequest),
                security(("tenantKey" = []), ("tenantKeyQuery" = [])),
                responses((status = 200, body = Page<$kind>), AuthErrors, InputErrors))]
            async fn list(
                auth: TenantAuth,
                State(state): State<AppState>,
                ApiQuery(page): ApiQuery<PageRequest>,
            ) -> ApiResult<Json<Page<$kind>>> {
                Ok(Json(state.services.config_list::<$kind>(&auth.tenant_id, &page).await?))
            }

            #[utoipa::path(post, path = $collection, tag = $tag, summary = $create_summary,
                description = "Without `id` this creates an object (201). With the `id` of an existing object it \
                    overrides that object (200). An unknown `id` is a 404.",
                request_body = $kind,
                security(("tenantKey" = []), ("tenantKeyQuery" = [])),
                responses((status = 201, body = $kind, description = "Created"), (status = 200, body = $kind, description = "Overridden"),
                    AuthErrors, InputErrors, NotFoundError))]
            async fn create(
                auth: TenantAuth,
                State(state): State<AppState>,
                ApiJson(input): ApiJson<$kind>,
            ) -> ApiResult<(StatusCode, Json<$kind>)> {
                let status = if input.meta.id.is_some() { StatusCode::OK } else { StatusCode::CREATED };
                Ok((status, Json(state.services.$save(&auth.tenant_id, input, &auth.actor).await?)))
            }

            #[utoipa::path(get, path = $item, tag = $tag, summary = $get_summary,
                params(("id" = String, Path, description = "Id")),
                security(("tenantKey" = []), ("tenantKeyQuery" = [])),
                responses((status = 200, body = $kind), AuthErrors, NotFoundError))]
            async fn get(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<$kind>> {
                Ok(Json(state.services.config_get::<$kind>(&auth.tenant_id, &id).await?))
            }

            #[utoipa::path(put, path = $item, tag = $tag, summary = $update_summary,
                params(("id" = String, Path, description = "Id")), request_body = $kind,
                security(("tenantKey" = []), ("tenantKeyQuery" = [])),
                responses((status = 200, body = $kind), AuthErrors, InputErrors, NotFoundError))]
            async fn update(
                auth: TenantAuth,
                State(state): State<AppState>,
                Path(id): Path<String>,
                ApiJson(mut input): ApiJson<$kind>,
            ) -> ApiResult<Json<$kind>> {
                input.meta.id = Some(id);
                Ok(Json(state.services.$save(&auth.tenant_id, input, &auth.actor).await?))
            }

            #[utoipa::path(delete, path = $item, tag = $tag, summary = $remove_summary,
                params(("id" = String, Path, description = "Id")),
                security(("tenantKey" = []), ("tenantKeyQuery" = [])),
                responses((status = 204, description = "Deleted"), AuthErrors, NotFoundError, ConflictError))]
            async fn remove(auth: TenantAuth, State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<StatusCode> {
                state.services.$delete(&auth.tenant_id, &id, &auth.actor).await?;
                Ok(StatusCode::NO_CONTENT)
            }
        }
    };
}

config_resource!(
    opening_hours,
    OpeningHours,
    tag = "openinghours",
    collection = "/openinghours",
    item = "/openinghours/{id}",
    save = save_opening_hours,
    delete = delete_opening_hours,
    list = "List opening hours",
    create = "Create or override opening hours",
    get = "Get opening hours",
    update = "Replace opening hours",
    remove = "Delete opening hours (409 while a rule uses them)"
);

/// `GET /openinghours/{id}/state`: whether opening hours are open at an instant.
pub mod opening_hours_state {
    use chrono::{DateTime, Utc};
    use rapport_core::{config::opening_hours::OpeningHoursState, CoreError};
    use serde::Deserialize;

    use super::*;

    pub fn router() -> OpenApiRouter<AppState> {
        OpenApiRouter::new().routes(routes!(state))
    }

    /// The instant to ask about.
    #[derive(Debug, Deserialize, utoipa::IntoParams)]
    #[into_params(parameter_in = Query)]
    struct StateQuery {
        /// An RFC 3339 date-time, e.g. `2026-03-30T09:00:00Z` (an offset's `+` may
        /// be sent unencoded); default now.
        #[param(value_type = Option<String>, format = DateTime, example = "2026-03-30T09:00:00Z")]
        at: Option<String>,
    }

    /// The query's `at`, read leniently: a `+` sent unencoded arrives as a space.
    fn instant(at: Option<&str>) -> Result<DateTime<Utc>, CoreError> {
        let Some(text) = at.map(str::trim).filter(|t| !t.is_empty()) else {
            return Ok(Utc::now());
        };
        DateTime::parse_from_rfc3339(&text.replace(' ', "+"))
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| {
                CoreError::invalid(
                    "at",
                    "invalid_value",
                    "at must be an RFC 3339 date-time such as 2026-03-30T09:00:00Z",
                )
            })
    }

    /// Whether the opening hours are open at `at` (default now), and when that
    /// next changes: when they close if open, when they open if closed. Intervals
    /// are local times in the hours' zone (DST included), holidays close whole
    /// days; `nextChangeAt` is `null` when no change comes within two years.
    #[utoipa::path(get, path = "/openinghours/{id}/state", tag = "openinghours",
        summary = "Whether opening hours are open, and when that changes",
        params(("id" = String, Path, description = "Id"), StateQuery),
        security(("tenantKey" = []), ("tenantKeyQuery" = [])),
        responses((status = 200, body = OpeningHoursState), AuthErrors, InputErrors, NotFoundError))]
    async fn state(
        auth: TenantAuth,
        State(state): State<AppState>,
        Path(id): Path<String>,
        ApiQuery(query): ApiQuery<StateQuery>,
    ) -> ApiResult<Json<OpeningHoursState>> {
        let at = instant(query.at.as_deref())?;
        Ok(Json(
            state.services.opening_hours_state(&auth.tenant_id, &id, at).await?,
        ))
    }
}

config_resource!(
    system_messages,
    SystemMessage,
    tag = "systemmessage",
    collection = "/systemmessage",
    item = "/systemmessage/{id}",
    save = save_system_message,
    delete = delete_system_message,
    list = "List system messages",
    create = "Create or override a system message",
    get = "Get a system message",
    update = "Replace a system message",
    remove = "Delete a system message (409 while a rule sends it)"
);

config_resource!(
    flows,
    Flow,
    tag = "flow",
    collection = "/flow",
    item = "/flow/{id}",
    save = save_flow,
    delete = delete_flow,
    list = "List flows",
    create = "Create or override a flow",
    get = "Get a flow",
    update = "Replace a flow",
    remove = "Delete a flow (409 while a rule sends it)"
);

config_resource!(
    watchdogs,
    Watchdog,
    tag = "watchdog",
    collection = "/watchdog",
    item = "/watchdog/{id}",
    save = save_watchdog,
    delete = delete_watchdog,
    list = "List watchdogs",
    create = "Create or override a watchdog",
    get = "Get a watchdog",
    update = "Replace a watchdog",
    remove = "Delete a watchdog"
);

config_resource!(
    routing_rules,
    RoutingRule,
    tag = "rule",
    collection = "/rule/routing",
    item = "/rule/routing/{id}",
    save = save_routing_rule,
    delete = delete_routing_rule,
    list = "List routing rules",
    create = "Create or override a routing rule",
    get = "Get a routing rule",
    update = "Replace a routing rule",
    remove = "Delete a routing rule (409 while another routes to it)"
);

config_resource!(
    sla_rules,
    SlaRule,
    tag = "rule",
    collection = "/rule/sla",
    item = "/rule/sla/{id}",
    save = save_sla_rule,
    delete = delete_sla_rule,
    list = "List SLA rules",
    create = "Create or override an SLA rule",
    get = "Get an SLA rule",
    update = "Replace an SLA rule",
    remove = "Delete an SLA rule"
);

config_resource!(
    action_rules,
    ActionRule,
    tag = "rule",
    collection = "/rule/action",
    item = "/rule/action/{id}",
    save = save_action_rule,
    delete = delete_action_rule,
    list = "List action rules",
    create = "Create or override an action rule",
    get = "Get an action rule",
    update = "Replace an action rule",
    remove = "Delete an action rule"
);

/// The routes of every settings object.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(opening_hours::router())
        .merge(opening_hours_state::router())
        .merge(system_messages::router())
        .merge(flows::router())
        .merge(watchdogs::router())
        .merge(routing_rules::router())
        .merge(sla_rules::router())
        .merge(action_rules::router())
}
