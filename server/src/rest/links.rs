//! `/cobrowsing/link` and `/liveview/link`: generated links (spec 2.12, 2.13).

use axum::{extract::State, http::StatusCode, Json};
use rapport_core::links::{CobrowseLinkRequest, CobrowseLinks, LiveViewLink, LiveViewLinkRequest};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::{
    http::{
        error::{ApiResult, AuthErrors, InputErrors},
        extract::{ApiJson, TenantAuth},
    },
    state::AppState,
};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(cobrowsing_link))
        .routes(routes!(liveview_link))
}

/// Generate Universal Co-Browsing links: a random session id, a host link and a join
/// link, each with its own unguessable token. They work for 24 hours.
#[utoipa::path(post, path = "/cobrowsing/link", tag = "links", request_body = CobrowseLinkRequest,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = CobrowseLinks), AuthErrors, InputErrors))]
async fn cobrowsing_link(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<CobrowseLinkRequest>,
) -> ApiResult<(StatusCode, Json<CobrowseLinks>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            state
                .services
                .create_cobrowse_links(&auth.tenant_id, input, &auth.actor)
                .await?,
        ),
    ))
}

/// Generate a public live-view link. Opening it opens the live view of this one
/// session on behalf of the named user, and nothing else: it signs nobody in, and
/// the view it opens lapses after 15 minutes unused and 4 hours after opening. The
/// link works once, within 10 minutes. Following it shows a page with one
/// button, in the link's language; only pressing it (`POST /liveview/open`)
/// uses the link, so link scanners in mail and chat, which fetch every link,
/// do not spend it.
#[utoipa::path(post, path = "/liveview/link", tag = "links", request_body = LiveViewLinkRequest,
    security(("tenantKey" = []), ("tenantKeyQuery" = [])),
    responses((status = 201, body = LiveViewLink), AuthErrors, InputErrors))]
async fn liveview_link(
    auth: TenantAuth,
    State(state): State<AppState>,
    ApiJson(input): ApiJson<LiveViewLinkRequest>,
) -> ApiResult<(StatusCode, Json<LiveViewLink>)> {
    Ok((
        StatusCode::CREATED,
        Json(
            state
                .services
                .create_liveview_link(&auth.tenant_id, input, &auth.actor)
                .await?,
        ),
    ))
}
