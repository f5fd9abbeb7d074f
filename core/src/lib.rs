//! Rapport's domain: the model, validation, storage and services.
//!
//! The crate has two faces:
//! - without the `server` feature it is the small, wasm-safe set of types that the
//!   browser dashboard shares with the server ([`model`], [`error`]);
//! - with `server` it adds storage on SQLite or PostgreSQL ([`db`]) and the services
//!   that every entry point (REST handlers, server functions, CLI) calls ([`Services`]).
//!
//! Nothing here knows about HTTP. Tenant isolation lives in the services: every
//! tenant-owned query is scoped by the tenant's id, so a row of another tenant
//! behaves exactly like a missing one; the tenant's id is a [`ids::TenantId`], so
//! that no other id can be passed in its place. See ARCHITECTURE.md.

pub mod error;
pub mod ids;
pub mod model;
pub mod redirects;
pub mod reports;

#[cfg(feature = "server")]
pub mod actor;
#[cfg(feature = "server")]
pub mod appointments;
#[cfg(feature = "server")]
pub mod audit;
#[cfg(feature = "server")]
pub mod auth;
#[cfg(feature = "server")]
pub mod backoff;
#[cfg(feature = "server")]
pub mod bootstrap;
#[cfg(feature = "server")]
pub mod cobrowsing;
#[cfg(feature = "server")]
pub mod config;
#[cfg(feature = "server")]
pub mod conversations;
#[cfg(feature = "server")]
pub mod crypto;
#[cfg(feature = "server")]
pub mod customers;
#[cfg(feature = "server")]
pub mod db;
#[cfg(feature = "server")]
pub mod engine;
#[cfg(feature = "server")]
pub mod events;
#[cfg(feature = "server")]
pub mod files;
#[cfg(feature = "server")]
pub mod jobs;
#[cfg(feature = "server")]
pub mod key_cache;
#[cfg(feature = "server")]
pub mod limits;
#[cfg(feature = "server")]
pub mod links;
#[cfg(feature = "server")]
pub mod live;
#[cfg(feature = "server")]
pub mod mail;
#[cfg(feature = "server")]
pub mod media_store;
#[cfg(feature = "server")]
pub mod notifications;
#[cfg(feature = "server")]
pub mod open_streams;
#[cfg(feature = "server")]
pub mod rate_windows;
#[cfg(feature = "server")]
pub mod recordings;
#[cfg(feature = "server")]
pub mod retention;
#[cfg(feature = "server")]
pub mod sealing;
#[cfg(feature = "server")]
pub mod search;
#[cfg(feature = "server")]
mod services;
#[cfg(feature = "server")]
pub mod sessions;
#[cfg(feature = "server")]
pub mod sign_ins;
#[cfg(feature = "server")]
pub mod teams;
#[cfg(feature = "server")]
pub mod tenants;
#[cfg(feature = "testing")]
pub mod testing;
#[cfg(feature = "server")]
pub mod text_blocks;
#[cfg(feature = "server")]
pub mod time;
#[cfg(feature = "server")]
pub mod usecases;
#[cfg(feature = "server")]
pub mod users;
#[cfg(feature = "server")]
pub mod validate;
#[cfg(feature = "server")]
pub mod webhooks;

#[cfg(feature = "server")]
pub use services::Services;

pub use error::{CoreError, FieldError};
