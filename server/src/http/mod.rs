//! HTTP plumbing shared by the REST API and the dashboard.

pub mod call_recordings;
pub mod client_ip;
pub mod continue_chat;
pub mod customer_export;
pub mod dashboard_user;
pub mod downloads;
pub mod error;
pub mod extract;
pub mod fair_share;
pub mod files;
pub mod health;
pub mod inbox_events;
pub mod live_updates;
pub mod metrics;
pub mod middleware;
pub mod rate_limit;
pub mod recording_views;
pub mod request_id;
pub mod session;
