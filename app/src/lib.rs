//! Rapport's dashboard: server-rendered Leptos pages, hydrated into wasm.
//!
//! - [`shell`] is the HTML document; [`App`] the router.
//! - `pages/` holds one module per page; `components/` the pieces they share.
//! - `routes` makes most pages lazy: each is its own wasm chunk, fetched when
//!   the page is first shown, so the first load stays small.
//! - `api/` holds the server functions: thin adapters that authenticate the session,
//!   check the role and call `rapport_core` services. They never hold business rules.
//!
//! Every form is a real `<form>` that works without JavaScript; with it, the same
//! forms submit in place and update the page without a reload.

#![recursion_limit = "256"]

pub mod api;
#[cfg(any(feature = "ssr", feature = "hydrate"))]
mod charts;
mod components;
mod erase;
pub mod language;
mod pages;
#[cfg(feature = "ssr")]
pub mod reports;
mod routes;
#[cfg(feature = "ssr")]
pub mod ssr;

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{ParentRoute, Route, Router, Routes},
    path, SsrMode,
};

use crate::{components::layout::Layout, pages::not_found::NotFound, routes::*};

/// The HTML document around the app, rendered on the server.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    #[cfg(feature = "ssr")]
    crate::ssr::send_content_security_policy();
    view! {
        <!DOCTYPE html>
        // `lang` comes from `language::DocumentLanguage`, per page.
        <html>
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                // Before anything else: clicks made while the app loads are kept
                // and replayed once it has hydrated.
                <script nonce=leptos::nonce::use_nonce() inner_html=include_str!("early_events.js")></script>
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
        // The empty text keeps "Rapport" as the title whenever no page names
        // one: while a lazy page's code loads, during hydration and between
        // pages. Without it the document would be left without a title then.
        <Title text="" formatter=|page: String| if page.is_empty() { "Rapport".to_string() } else { format!("{page} · Rapport") } />
        <Router>
            <language::DocumentLanguage />
            <Routes fallback=|| view! { <NotFound /> }>
                <Route path=path!("/login") view=LazyPage(Page::Login) ssr=SsrMode::Async />
                <Route path=path!("/cobrowse/:id") view=LazyPage(Page::Cobrowse) ssr=SsrMode::Async />
                <Route path=path!("/join/:token") view=LazyPage(Page::Join) ssr=SsrMode::Async />
                // Outside the layout: a live-view grant opens this page and nothing else.
                <Route path=path!("/liveview/:id") view=LazyPage(Page::LiveView) ssr=SsrMode::Async />
                // Signed-in pages render whole before the first byte (`Async`), so a
                // redirect to the login page or a 403 can still set the status line.
                <ParentRoute path=path!("") view=Layout ssr=SsrMode::Async>
                    <Route path=path!("/") view=LazyPage(Page::Home) ssr=SsrMode::Async />
                    <Route path=path!("/account") view=LazyPage(Page::Account) ssr=SsrMode::Async />
                    <Route path=path!("/settings/api-keys") view=LazyPage(Page::ApiKeys) ssr=SsrMode::Async />
                    <Route path=path!("/platform/api") view=LazyPage(Page::PlatformApi) ssr=SsrMode::Async />
                    <Route path=path!("/settings/opening-hours") view=LazyPage(Page::OpeningHoursList) ssr=SsrMode::Async />
                    <Route path=path!("/settings/opening-hours/:id") view=LazyPage(Page::OpeningHours) ssr=SsrMode::Async />
                    <Route path=path!("/settings/users") view=LazyPage(Page::Users) ssr=SsrMode::Async />
                    <Route path=path!("/settings/users/:id") view=LazyPage(Page::User) ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams") view=LazyPage(Page::Teams) ssr=SsrMode::Async />
                    <Route path=path!("/settings/system-messages") view=LazyPage(Page::SystemMessages) ssr=SsrMode::Async />
                    <Route path=path!("/settings/system-messages/:id") view=LazyPage(Page::SystemMessage) ssr=SsrMode::Async />
                    <Route path=path!("/settings/text-blocks") view=LazyPage(Page::TextBlocks) ssr=SsrMode::Async />
                    <Route path=path!("/settings/text-blocks/:id") view=LazyPage(Page::TextBlock) ssr=SsrMode::Async />
                    <Route path=path!("/settings/flows") view=LazyPage(Page::Flows) ssr=SsrMode::Async />
                    <Route path=path!("/settings/flows/:id") view=LazyPage(Page::Flow) ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams/:id") view=LazyPage(Page::Team) ssr=SsrMode::Async />
                    <Route path=path!("/settings/routing-rules") view=LazyPage(Page::RoutingRules) ssr=SsrMode::Async />
                    <Route path=path!("/settings/routing-rules/:id") view=LazyPage(Page::RoutingRule) ssr=SsrMode::Async />
                    <Route path=path!("/settings/sla-rules") view=LazyPage(Page::SlaRules) ssr=SsrMode::Async />
                    <Route path=path!("/settings/sla-rules/:id") view=LazyPage(Page::SlaRule) ssr=SsrMode::Async />
                    <Route path=path!("/settings/action-rules") view=LazyPage(Page::ActionRules) ssr=SsrMode::Async />
                    <Route path=path!("/settings/action-rules/:id") view=LazyPage(Page::ActionRule) ssr=SsrMode::Async />
                    <Route path=path!("/settings/outbox") view=LazyPage(Page::Outbox) ssr=SsrMode::Async />
                    <Route path=path!("/settings/watchdogs") view=LazyPage(Page::Watchdogs) ssr=SsrMode::Async />
                    <Route path=path!("/settings/watchdogs/:id") view=LazyPage(Page::Watchdog) ssr=SsrMode::Async />
                    <Route path=path!("/settings") view=LazyPage(Page::Settings) ssr=SsrMode::Async />
                    <Route path=path!("/settings/workspace") view=LazyPage(Page::Workspace) ssr=SsrMode::Async />
                    <Route path=path!("/settings/audit") view=LazyPage(Page::Audit) ssr=SsrMode::Async />
                    <Route path=path!("/settings/webhooks") view=LazyPage(Page::Webhooks) ssr=SsrMode::Async />
                    <Route path=path!("/settings/webhooks/:id") view=LazyPage(Page::Webhook) ssr=SsrMode::Async />
                    <Route path=path!("/platform/tenants") view=LazyPage(Page::Tenants) ssr=SsrMode::Async />
                    <Route path=path!("/platform/tenants/:id") view=LazyPage(Page::Tenant) ssr=SsrMode::Async />
                    <Route path=path!("/docs/api") view=LazyPage(Page::ApiReference) ssr=SsrMode::Async />
                    <Route path=path!("/inbox") view=LazyPage(Page::Inbox) ssr=SsrMode::Async />
                    <Route path=path!("/inbox/:id") view=LazyPage(Page::Inbox) ssr=SsrMode::Async />
                    <Route path=path!("/search") view=LazyPage(Page::Search) ssr=SsrMode::Async />
                    <Route path=path!("/notifications") view=LazyPage(Page::Notifications) ssr=SsrMode::Async />
                    <Route path=path!("/sessions") view=LazyPage(Page::Sessions) ssr=SsrMode::Async />
                    <Route path=path!("/sessions/:id") view=LazyPage(Page::Session) ssr=SsrMode::Async />
                    <Route path=path!("/sessions/:id/live-view") view=LazyPage(Page::SessionLive) ssr=SsrMode::Async />
                    <Route path=path!("/appointments") view=LazyPage(Page::Appointments) ssr=SsrMode::Async />
                    <Route path=path!("/appointments/new") view=LazyPage(Page::NewAppointment) ssr=SsrMode::Async />
                    <Route path=path!("/appointments/:id") view=LazyPage(Page::Appointment) ssr=SsrMode::Async />
                    <Route path=path!("/links") view=LazyPage(Page::Links) ssr=SsrMode::Async />
                    <Route path=path!("/reports") view=LazyPage(Page::ReportsIndex) ssr=SsrMode::Async />
                    <Route path=path!("/reports/:family") view=LazyPage(Page::Report) ssr=SsrMode::Async />
                </ParentRoute>
            </Routes>
        </Router>
    }
}
