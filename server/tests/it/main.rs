//! HTTP tests: the real router, served on a real port, on a real database. Each test
//! runs on SQLite and on PostgreSQL (`RAPPORT_TEST_POSTGRES_URL`).

mod auth;
mod binary;
mod conformance;
mod conversations;
mod customer_tags;
mod dashboard;
mod dashboard_forms;
mod dashboard_routing;
mod dashboard_rules;
mod dashboard_settings;
mod durability;
mod engine_settings;
mod errors;
mod flows;
mod inbox;
mod instance;
mod jobs;
mod link_grants;
mod links_open;
mod mail;
mod meetings;
mod openapi;
mod operations;
mod people;
mod receiver;
mod report_pages;
mod reports;
mod resources;
mod rollups;
mod routing_api;
mod settings;
mod smtp;
mod tenants;
mod utils;
mod webhooks;
