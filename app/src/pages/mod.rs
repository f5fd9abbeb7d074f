//! One module per page.

pub mod api_keys;
pub mod api_reference;
pub mod appointments;
pub mod audit;
pub mod flows;
pub mod home;
pub mod inbox;
pub mod inbox_customer;
pub mod inbox_routing;
pub mod link_tools;
pub mod links;
pub mod login;
pub mod not_found;
pub mod notifications;
pub mod opening_hours;
pub mod outbox;
pub mod reports;
pub mod rules;
pub mod settings;
pub mod system_messages;
pub mod teams;
pub mod tenants;
pub mod users;
pub mod watchdogs;
pub mod webhooks;
pub mod workspace;
