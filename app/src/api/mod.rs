//! Server functions: the dashboard's calls to the server. Each one checks the
//! session and role first, then calls a `rapport_core` service.

pub mod account;
pub mod action_rules;
pub mod alerts;
pub mod appointments;
pub mod audit;
pub mod flows;
pub mod inbox;
pub mod keys;
pub mod links;
pub mod mail;
pub mod notifications;
pub mod opening_hours;
pub mod presence;
pub mod problem;
pub mod recordings;
pub mod reference;
pub mod reports;
pub mod routing_log;
pub mod rules;
pub mod search;
pub mod session;
pub mod system_messages;
pub mod teams;
pub mod tenants;
pub mod text_blocks;
pub mod users;
pub mod watchdogs;
pub mod webhooks;
pub mod workspace;
