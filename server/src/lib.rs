//! The `rapport` server: configuration, HTTP wiring (REST API under `/rest/v1`,
//! the Leptos dashboard's SSR and server functions, assets), and the CLI.
//!
//! `main.rs` only calls [`cli::main`]; tests build the same application with
//! [`serve::state`] and [`serve::serve`] on a port of their own.

pub mod app;
pub mod cli;
pub mod cobrowse;
pub mod config;
pub mod demo;
pub mod http;
pub mod logging;
pub mod mail;
pub mod media;
pub mod rest;
pub mod serve;
pub mod state;
pub mod webhooks;
pub mod workers;
