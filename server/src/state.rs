//! What every handler can reach.

use std::sync::Arc;

use axum::extract::FromRef;
use leptos::config::LeptosOptions;
use rapport_core::Services;

use crate::{config::ServeConfig, http::metrics::Metrics, http::rate_limit::Limiters};

/// Shared application state; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    /// The domain services.
    pub services: Services,
    /// The server settings.
    pub config: Arc<ServeConfig>,
    /// Leptos' settings (site directory, bundle name).
    pub leptos: LeptosOptions,
    /// Prometheus metrics of this instance.
    pub metrics: Arc<Metrics>,
    /// Rate limiters of this instance.
    pub limiters: Arc<Limiters>,
    /// Each workspace's share of this instance for its public requests.
    pub shares: Arc<crate::http::fair_share::PublicShares>,
    /// This instance's video conferences.
    pub conferences: Arc<crate::media::Conferences>,
    /// This instance's universal co-browsing sessions.
    pub cobrowsing: Arc<crate::cobrowse::Cobrowsing>,
}

/// `GET /metrics` reads the metrics alone.
impl FromRef<AppState> for Arc<Metrics> {
    fn from_ref(state: &AppState) -> Self {
        state.metrics.clone()
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(state: &AppState) -> Self {
        state.leptos.clone()
    }
}
