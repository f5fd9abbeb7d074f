//! The REST API under `/rest/v1`: one module per resource, each exporting
//! `router()`. Routes are declared only through `utoipa_axum::routes!`, which reads
//! each handler's `#[utoipa::path]`, so the OpenAPI document and the router come
//! from the same lines (and `tests/openapi.rs` checks that nothing slips past).

use std::sync::Arc;

use axum::{Extension, Json};
use utoipa::{
    openapi::{
        security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme},
        OpenApi as OpenApiDoc,
    },
    Modify, OpenApi,
};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{http::error::Problem, state::AppState};

mod action_rules;
mod apikey;
mod appointment;
mod audit;
mod config;
mod conversation;
mod customer;
mod links;
mod note;
mod recording;
mod refine;
mod report;
mod routing;
mod search;
mod session;
mod team;
mod tenant;
mod text_block;
mod user;
mod webhook;
mod widget;

pub use widget::WIDGET_KEY_HEADER;

/// Base path of this API version.
pub const BASE: &str = "/rest/v1";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Rapport",
        description = "Rapport's customer engagement API. Authenticate with a tenant API key \
            (Settings → Developer tools → API keys) or, for tenant management, a platform key \
            (Settings → API), sent as `Authorization: Bearer <token>` or `?access_token=<token>`. \
            Errors are RFC 9457 `application/problem+json` with a stable `code`. Lists are paged \
            with `pageNumber` (from 0), `pageSize` (1–200, default 20) and `offset`.",
        license(name = "AGPL-3.0-only")
    ),
    modifiers(&SecuritySchemes),
    // `CsatSubmitted` is only a webhook body (`csat.submitted`), named here so
    // that integrators find it; the other bodies are responses too.
    components(schemas(Problem, rapport_core::FieldError, rapport_core::usecases::csat::CsatSubmitted, rapport_core::customers::CustomerErased)),
    tags(
        (name = "tenant", description = "Tenant management (platform key)"),
        (name = "workspace", description = "The API key's own tenant and its settings"),
        (name = "apikey", description = "Tenant API keys"),
        (name = "customer", description = "Customers and their assignment"),
        (name = "conversation", description = "Conversation status and messages (spec 2.2, 2.3, 3)"),
        (name = "webhook", description = "Webhook subscriptions, delivery log and replay (spec 6)"),
        (name = "widget", description = "The visitor widget's public endpoints (widget key + visitor token). \
            Every request with a widget key runs in its workspace's share of the instance: past it, \
            requests wait their turn, and one that cannot (1,024 waiting, or 10 s) gets 429 \
            `workspace_busy` with `Retry-After`."),
        (name = "user", description = "Dashboard users"),
        (name = "team", description = "Teams"),
        (name = "openinghours", description = "Opening hours"),
        (name = "systemmessage", description = "System messages"),
        (name = "textblock", description = "Text blocks: answers agents insert with `/shortcut` (our extension)"),
        (name = "flow", description = "Flows: ordered messages a routing rule's SEND_FLOW sends (our extension)"),
        (name = "watchdog", description = "Watchdogs"),
        (name = "rule", description = "Routing and SLA rules"),
        (name = "appointment", description = "Video-conference appointments"),
        (name = "links", description = "Co-browsing and live-view links"),
        (name = "session", description = "Recorded visitor sessions"),
        (name = "audit", description = "User-activity log"),
        (name = "meta", description = "The API's own description"),
    )
)]
struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut OpenApiDoc) {
        let components = openapi.components.get_or_insert_with(Default::default);
        let bearer = || SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build());
        let query = || SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::new("access_token")));
        components.add_security_scheme("tenantKey", bearer());
        components.add_security_scheme("tenantKeyQuery", query());
        components.add_security_scheme("platformKey", bearer());
        components.add_security_scheme("platformKeyQuery", query());
        components.add_security_scheme("visitorToken", bearer());
        components.add_security_scheme("writeToken", bearer());
        components.add_security_scheme(
            "widgetKey",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("rapport-widget-key"))),
        );
    }
}

/// The REST router (to nest at [`BASE`]) and its OpenAPI document, as the JSON
/// that is served (utoipa's, with what [`refine`] adds).
pub fn router() -> (axum::Router<AppState>, Arc<serde_json::Value>) {
    let (router, mut doc) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .nest(BASE, api())
        .split_for_parts();
    doc.openapi = utoipa::openapi::OpenApiVersion::Version31;
    let mut doc = serde_json::to_value(&doc).expect("the OpenAPI document serialises");
    refine::refine(&mut doc);
    let doc = Arc::new(doc);
    let router = router.layer(Extension(doc.clone()));
    (router, doc)
}

fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(openapi_json))
        .merge(tenant::router())
        .merge(apikey::router())
        .merge(customer::router())
        .merge(note::router())
        .merge(search::router())
        .merge(user::router())
        .merge(team::router())
        .merge(text_block::router())
        .merge(config::router())
        .merge(action_rules::router())
        .merge(routing::router())
        .merge(appointment::router())
        .merge(links::router())
        .merge(session::router())
        .merge(audit::router())
        .merge(conversation::router())
        .merge(webhook::router())
        .merge(widget::router())
        .merge(recording::router())
        .merge(report::router())
}

/// This document: the OpenAPI 3.1 description of the REST API.
#[utoipa::path(get, path = "/openapi.json", tag = "meta", responses((status = 200, description = "The OpenAPI document", content_type = "application/json")))]
async fn openapi_json(Extension(doc): Extension<Arc<serde_json::Value>>) -> Json<serde_json::Value> {
    Json((*doc).clone())
}
