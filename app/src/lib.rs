//! Rapport's dashboard: server-rendered Leptos pages, hydrated into wasm.
//!
//! - [`shell`] is the HTML document; [`App`] the router.
//! - `pages/` holds one module per page; `components/` the pieces they share.
//! - `api/` holds the server functions: thin adapters that authenticate the session,
//!   check the role and call `rapport_core` services. They never hold business rules.
//!
//! Every form is a real `<form>` that works without JavaScript; with it, the same
//! forms submit in place and update the page without a reload.

#![recursion_limit = "256"]

pub mod api;
#[cfg(feature = "ssr")]
mod charts;
mod components;
mod pages;
#[cfg(feature = "ssr")]
pub mod reports;
#[cfg(feature = "ssr")]
pub mod ssr;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{ParentRoute, Route, Router, Routes},
    path, SsrMode,
};

use crate::{
    components::layout::Layout,
    pages::{
        api_keys::{ApiKeysPage, PlatformApiPage},
        api_reference::ApiReferencePage,
        audit::AuditPage,
        home::HomePage,
        inbox::InboxPage,
        link_tools::LinksPage,
        links::{CobrowsePage, JoinPage, LiveViewPage},
        login::LoginPage,
        not_found::NotFound,
        opening_hours::{OpeningHoursListPage, OpeningHoursPage},
        reports::{ReportPage, ReportsIndexPage},
        settings::SettingsPage,
        system_messages::{SystemMessagePage, SystemMessagesPage},
        teams::{TeamPage, TeamsPage},
        tenants::TenantsPage,
        users::{UserPage, UsersPage},
        webhooks::{WebhookPage, WebhooksPage},
        workspace::WorkspacePage,
    },
};

/// The HTML document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                <HydrationScripts options=options.clone() />
                <MetaTags />
            </head>
            <body>
                <App />
            </body>
        </html>
    }
}

/// The dashboard's routes.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="leptos" href="/pkg/rapport.css" />
        <Title formatter=|page: String| if page.is_empty() { "Rapport".to_string() } else { format!("{page} · Rapport") } />
        <Router>
            <Routes fallback=|| view! { <NotFound /> }>
                <Route path=path!("/login") view=LoginPage />
                <Route path=path!("/cobrowse/:id") view=CobrowsePage ssr=SsrMode::Async />
                <Route path=path!("/join/:token") view=JoinPage ssr=SsrMode::Async />
                // Signed-in pages render whole before the first byte (`Async`), so a
                // redirect to the login page or a 403 can still set the status line.
                <ParentRoute path=path!("") view=Layout ssr=SsrMode::Async>
                    <Route path=path!("/") view=HomePage ssr=SsrMode::Async />
                    <Route path=path!("/settings/api-keys") view=ApiKeysPage ssr=SsrMode::Async />
                    <Route path=path!("/platform/api") view=PlatformApiPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/opening-hours") view=OpeningHoursListPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/opening-hours/:id") view=OpeningHoursPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/users") view=UsersPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/users/:id") view=UserPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams") view=TeamsPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/system-messages") view=SystemMessagesPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/system-messages/:id") view=SystemMessagePage ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams/:id") view=TeamPage ssr=SsrMode::Async />
                    <Route path=path!("/settings") view=SettingsPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/workspace") view=WorkspacePage ssr=SsrMode::Async />
                    <Route path=path!("/settings/audit") view=AuditPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/webhooks") view=WebhooksPage ssr=SsrMode::Async />
                    <Route path=path!("/settings/webhooks/:id") view=WebhookPage ssr=SsrMode::Async />
                    <Route path=path!("/platform/tenants") view=TenantsPage ssr=SsrMode::Async />
                    <Route path=path!("/docs/api") view=ApiReferencePage ssr=SsrMode::Async />
                    <Route path=path!("/inbox") view=InboxPage ssr=SsrMode::Async />
                    <Route path=path!("/links") view=LinksPage ssr=SsrMode::Async />
                    <Route path=path!("/reports") view=ReportsIndexPage ssr=SsrMode::Async />
                    <Route path=path!("/reports/:family") view=ReportPage ssr=SsrMode::Async />
                    <Route path=path!("/liveview/:id") view=LiveViewPage ssr=SsrMode::Async />
                </ParentRoute>
            </Routes>
        </Router>
    }
}
