//! Assembles the HTTP application: REST API, dashboard (SSR, server functions and
//! assets), health and metrics, and the layers around them.
//!
//! Layers, outermost first: request id → access-log span → metrics → problem+json
//! rewrite of `/rest/` errors (outside everything that can produce one: panics,
//! timeouts, body limits) → panic catcher → security headers → compression →
//! timeout → body limit → same-origin check. REST routes add their rate limits.

use std::sync::Arc;

use axum::{
    extract::DefaultBodyLimit,
    http::{header, HeaderValue, StatusCode},
    middleware,
    response::IntoResponse,
    routing::{any, get, post},
    Router,
};
use leptos::prelude::provide_context;
use leptos_axum::{generate_route_list, LeptosRoutes};
use rapport_app::{shell, ssr::DashboardContext, App};
use tower_http::{
    catch_panic::CatchPanicLayer,
    compression::{
        predicate::{DefaultPredicate, NotForContentType, Predicate},
        CompressionLayer,
    },
    set_header::SetResponseHeaderLayer,
    timeout::TimeoutLayer,
    trace::TraceLayer,
};

use crate::{
    http::{
        call_recordings, client_ip, continue_chat, customer_export, downloads, error::ApiError, files, health,
        inbox_events, metrics, middleware as mw, recording_views, request_id, session,
    },
    rest,
    state::AppState,
};

/// The whole application, ready to serve.
pub fn build(state: AppState) -> Router {
    let (rest_router, doc) = rest::router();
    let rest_router = rest_router
        .route(
            "/rest/{*rest}",
            any(|| async { ApiError::for_status(StatusCode::NOT_FOUND) }),
        )
        // The rate limits refuse first, at the least cost; what passes them runs
        // in its workspace's share.
        .layer(middleware::from_fn_with_state(state.shares.clone(), mw::public_share))
        .layer(middleware::from_fn_with_state(state.clone(), mw::rest_rate_limit));

    let dashboard = dashboard_context(&state, &doc);
    let routes = generate_route_list(App);
    let leptos_options = state.leptos.clone();
    let context_for_fallback = dashboard.clone();

    Router::new()
        .route("/health", get(health::health))
        .route("/ready", get(health::ready))
        .route("/metrics", get(metrics::serve))
        .route("/auth/login", post(session::login))
        .route("/auth/logout", post(session::logout))
        .route(
            "/liveview/open",
            get(session::liveview_page).post(session::open_liveview),
        )
        .route(
            "/chat/{token}",
            get(continue_chat::continue_page).post(continue_chat::continue_chat),
        )
        .route("/reports/{family}/csv", get(downloads::report_csv))
        .route("/inbox/events", get(inbox_events::inbox_events))
        .route("/sessions/{id}/events", get(recording_views::events))
        .route("/sessions/{id}/live", get(recording_views::live))
        .route("/sessions/{id}/cobrowse", post(recording_views::cobrowse))
        .route("/files/{token}/{name}", get(files::download))
        .route(
            "/appointments/{id}/recordings/{recording}",
            get(call_recordings::download),
        )
        .route("/inbox/{id}/file", post(files::send_from_inbox))
        .route("/inbox/{id}/export", get(customer_export::download))
        .route("/join/{token}/ws", get(crate::media::signal::join_socket))
        .route("/cobrowse/{id}/ws", get(crate::cobrowse::socket::cobrowse_socket))
        .merge(rest_router)
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(dashboard.clone()),
            move || shell(leptos_options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(
            move || provide_context(context_for_fallback.clone()),
            shell,
        ))
        .route_layer(middleware::from_fn(metrics::record_route))
        .layer(middleware::from_fn(mw::finish_even_if_abandoned))
        .layer(middleware::from_fn_with_state(state.clone(), mw::same_origin_only))
        .layer(middleware::from_fn(mw::revalidate_bundle))
        // `limit_body` bounds each body by its path (files may be larger), so
        // extractors add no limit of their own.
        .layer(DefaultBodyLimit::disable())
        .layer(middleware::from_fn_with_state(state.clone(), mw::limit_body))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            state.config.request_timeout(),
        ))
        // Recordings and media are compressed already; compressing them again
        // costs CPU and loses the byte ranges a player seeks with.
        .layer(
            CompressionLayer::new().compress_when(
                DefaultPredicate::new()
                    .and(NotForContentType::const_new("video/"))
                    .and(NotForContentType::const_new("audio/")),
            ),
        )
        .layer(middleware::from_fn_with_state(state.clone(), mw::strict_transport))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("same-origin"),
        ))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::internal("handler panicked").into_response()
        }))
        .layer(middleware::from_fn(mw::problem_fallback))
        .layer(middleware::from_fn_with_state(state.metrics.clone(), metrics::track))
        .layer(middleware::from_fn_with_state(
            Arc::new(state.config.trusted_proxies.clone()),
            client_ip::resolve,
        ))
        .layer(TraceLayer::new_for_http().make_span_with(mw::RequestSpan))
        .layer(middleware::from_fn(request_id::assign))
        .with_state(state)
}

fn dashboard_context(state: &AppState, doc: &Arc<serde_json::Value>) -> DashboardContext {
    DashboardContext {
        services: state.services.clone(),
        secure_cookies: state.config.secure_cookies(),
        openapi: doc.clone(),
        smtp_configured: state
            .config
            .mail
            .smtp_url
            .as_deref()
            .is_some_and(|u| !u.trim().is_empty()),
        public_url: state.config.public_url(),
        cobrowse_unavailable: state.cobrowsing.unavailable().map(str::to_string),
    }
}
