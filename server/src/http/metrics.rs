//! Prometheus metrics: request counts and latencies by route and status, served as
//! text at `GET /metrics`. Each app instance has its own registry (no globals), so
//! several instances can share a test process.

use std::{
    sync::{Arc, Mutex},
    time::Instant,
};

use axum::{
    extract::{MatchedPath, Request, State},
    http::header,
    middleware::Next,
    response::{IntoResponse, Response},
};
use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, Opts, Registry, TextEncoder};

/// This instance's metrics.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
}

impl Metrics {
    /// Registers the HTTP metrics.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new(
                "rapport_http_requests_total",
                "HTTP requests handled, by method, route and status",
            ),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "rapport_http_request_duration_seconds",
                "HTTP request latency, by method, route and status",
            )
            .buckets(vec![
                0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
            ]),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        registry.register(Box::new(requests.clone())).expect("unique metric");
        registry.register(Box::new(latency.clone())).expect("unique metric");
        Metrics {
            registry,
            requests,
            latency,
        }
    }

    /// The registry in Prometheus text format.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// The matched route template, filled in by [`record_route`] once routing is done.
/// (The outer middleware runs before routing, so it cannot see `MatchedPath` itself.)
#[derive(Clone, Default)]
struct RouteSlot(Arc<Mutex<Option<String>>>);

/// Outer middleware: times the request and records it under its route template.
/// Its state is the instance's [`Metrics`] alone.
pub async fn track(State(metrics): State<Arc<Metrics>>, mut req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = req.method().to_string();
    let slot = RouteSlot::default();
    req.extensions_mut().insert(slot.clone());
    let response = next.run(req).await;
    let route = slot
        .0
        .lock()
        .ok()
        .and_then(|r| r.clone())
        .unwrap_or_else(|| "unmatched".into());
    let status = response.status().as_u16().to_string();
    let labels = [method.as_str(), route.as_str(), status.as_str()];
    metrics.requests.with_label_values(&labels).inc();
    metrics
        .latency
        .with_label_values(&labels)
        .observe(start.elapsed().as_secs_f64());
    response
}

/// Route middleware: writes the matched route template into the request's slot.
pub async fn record_route(req: Request, next: Next) -> Response {
    if let (Some(slot), Some(path)) = (
        req.extensions().get::<RouteSlot>(),
        req.extensions().get::<MatchedPath>(),
    ) {
        if let Ok(mut guard) = slot.0.lock() {
            *guard = Some(path.as_str().to_string());
        }
    }
    next.run(req).await
}

/// `GET /metrics`.
pub async fn serve(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")],
        metrics.render(),
    )
}
