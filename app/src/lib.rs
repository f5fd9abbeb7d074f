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
    path, Lazy, SsrMode,
};

use crate::{
    components::layout::Layout,
    pages::{home::HomePage, login::LoginPage, not_found::NotFound},
    routes::*,
};

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
                <Route path=path!("/login") view=LoginPage />
                <Route path=path!("/cobrowse/:id") view={Lazy::<CobrowseRoute>::new()} ssr=SsrMode::Async />
                <Route path=path!("/join/:token") view={Lazy::<JoinRoute>::new()} ssr=SsrMode::Async />
                // Outside the layout: a live-view grant opens this page and nothing else.
                <Route path=path!("/liveview/:id") view={Lazy::<LiveViewRoute>::new()} ssr=SsrMode::Async />
                // Signed-in pages render whole before the first byte (`Async`), so a
                // redirect to the login page or a 403 can still set the status line.
                <ParentRoute path=path!("") view=Layout ssr=SsrMode::Async>
                    <Route path=path!("/") view=HomePage ssr=SsrMode::Async />
                    <Route path=path!("/account") view={Lazy::<AccountRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/api-keys") view={Lazy::<ApiKeysRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/platform/api") view={Lazy::<PlatformApiRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/opening-hours") view={Lazy::<OpeningHoursListRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/opening-hours/:id") view={Lazy::<OpeningHoursRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/users") view={Lazy::<UsersRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/users/:id") view={Lazy::<UserRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams") view={Lazy::<TeamsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/system-messages") view={Lazy::<SystemMessagesRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/system-messages/:id") view={Lazy::<SystemMessageRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/text-blocks") view={Lazy::<TextBlocksRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/text-blocks/:id") view={Lazy::<TextBlockRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/flows") view={Lazy::<FlowsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/flows/:id") view={Lazy::<FlowRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/teams/:id") view={Lazy::<TeamRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/routing-rules") view={Lazy::<RoutingRulesRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/routing-rules/:id") view={Lazy::<RoutingRuleRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/sla-rules") view={Lazy::<SlaRulesRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/sla-rules/:id") view={Lazy::<SlaRuleRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/action-rules") view={Lazy::<ActionRulesRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/action-rules/:id") view={Lazy::<ActionRuleRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/outbox") view={Lazy::<OutboxRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/watchdogs") view={Lazy::<WatchdogsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/watchdogs/:id") view={Lazy::<WatchdogRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings") view={Lazy::<SettingsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/workspace") view={Lazy::<WorkspaceRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/audit") view={Lazy::<AuditRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/webhooks") view={Lazy::<WebhooksRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/settings/webhooks/:id") view={Lazy::<WebhookRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/platform/tenants") view={Lazy::<TenantsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/platform/tenants/:id") view={Lazy::<TenantRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/docs/api") view={Lazy::<ApiReferenceRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/inbox") view={Lazy::<InboxRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/inbox/:id") view={Lazy::<InboxRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/search") view={Lazy::<SearchRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/notifications") view={Lazy::<NotificationsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/sessions") view={Lazy::<SessionsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/sessions/:id") view={Lazy::<SessionRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/sessions/:id/live-view") view={Lazy::<SessionLiveRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/appointments") view={Lazy::<AppointmentsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/appointments/new") view={Lazy::<NewAppointmentRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/appointments/:id") view={Lazy::<AppointmentRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/links") view={Lazy::<LinksRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/reports") view={Lazy::<ReportsIndexRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/reports/:family") view={Lazy::<ReportRoute>::new()} ssr=SsrMode::Async />
                </ParentRoute>
            </Routes>
        </Router>
    }
}
