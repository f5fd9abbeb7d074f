//! The lazy routes. Pages are grouped in areas: each settings resource (its
//! list and its detail page) is one, and so are the inbox, appointments, links
//! and reports. Rules, webhooks and appointments are the exceptions: their
//! lists (the calendar) are one area and one item's page another, since its
//! form (and a webhook's delivery log) is most of their code.
//! Each area is compiled into its own wasm chunk, which the browser fetches
//! the first time one of its pages is shown (the server preloads the chunks of
//! the page it renders). The main module carries only the shell, the router,
//! the layout and the "not found" page; even the start and sign-in pages are
//! areas, since every other page would load them too. Inside a page, code that
//! is needed only on use is a lazy function of its own (the inbox's text-block
//! list, `pages/inbox/blocks.rs`).
//!
//! Why areas and not a chunk per page: moving between a list and its detail
//! page needs no request, and the pages of an area share most of their code.
//! Why not one area for all settings: it made a settings page's first load
//! some 860 KB compressed, as every admin page's code came with it. Code that
//! several areas share is merged into a few chunks by the splitter (see
//! `xtask/src/site.rs`), so a page needs a handful of files, not hundreds.
//!
//! Nothing outside this module may name a page listed here, or its code is
//! pulled back into the main module.

#[cfg(not(feature = "ssr"))]
use leptos::lazy;
use leptos::prelude::*;
use std::future::Future;

use leptos_router::ChooseView;

use crate::erase::EraseView;
#[cfg(not(feature = "ssr"))]
use crate::pages::not_found::NotFound;
use crate::pages::{
    account::AccountPage,
    api_keys::{ApiKeysPage, PlatformApiPage},
    api_reference::ApiReferencePage,
    appointments::{AppointmentPage, AppointmentsPage, NewAppointmentPage},
    audit::AuditPage,
    flows::{FlowPage, FlowsPage},
    home::HomePage,
    inbox::InboxPage,
    link_tools::LinksPage,
    links::{CobrowsePage, JoinPage, LiveViewPage},
    login::LoginPage,
    notifications::NotificationsPage,
    opening_hours::{OpeningHoursListPage, OpeningHoursPage},
    outbox::OutboxPage,
    reports::{ReportPage, ReportsIndexPage},
    rules::{ActionRulePage, ActionRulesPage, RoutingRulePage, RoutingRulesPage, SlaRulePage, SlaRulesPage},
    search::SearchPage,
    sessions::{SessionLivePage, SessionPage, SessionsPage},
    settings::SettingsPage,
    system_messages::{SystemMessagePage, SystemMessagesPage},
    teams::{TeamPage, TeamsPage},
    tenants::{TenantPage, TenantsPage},
    text_blocks::{TextBlockPage, TextBlocksPage},
    users::{UserPage, UsersPage},
    watchdogs::{WatchdogPage, WatchdogsPage},
    webhooks::{endpoint::WebhookPage, WebhooksPage},
    workspace::WorkspacePage,
};

/// On the server: the `<link rel="preload">` tag for an area's pack (the
/// modules its code needs, in one file; see `write_packs` in `xtask/src/site.rs`),
/// so the browser fetches it alongside the main module rather than after it.
///
/// Leptos 0.8 can preload chunks by itself when a lazy function runs during
/// server rendering, but it only keeps the record if the function runs in a
/// narrow window of its renderer's set-up: in release builds `/inbox` and
/// `/reports` missed it. So the server renders area pages directly, and names
/// their packs here from the manifest the build writes.
#[cfg(feature = "ssr")]
fn preload_area(area: &str) {
    use leptos_meta::Link;
    let manifest = use_context::<leptos::WasmSplitManifest>().and_then(|m| m.0.try_get_value());
    let Some((pkg, modules, loader)) = manifest else {
        // A build without split chunks (tests): nothing to preload.
        return;
    };
    // Keys are the lazy function's name and a numeric suffix.
    let prefix = format!("{area}_");
    let keys = modules.keys().filter(|key| {
        key.strip_prefix(&prefix)
            .is_some_and(|suffix| !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()))
    });
    // Rendering a `Link` registers it for the page's `<head>` and writes
    // nothing where it stands, so the page's body (which the browser hydrates
    // without these calls) stays the same.
    for key in keys {
        let _ = view! {
            <Link rel="preload" href=format!("{pkg}/pack_{key}.bin") as_="fetch" type_="application/octet-stream" crossorigin="" />
        }
        .to_html();
    }
    let _ = view! { <Link rel="modulepreload" href=format!("{pkg}/{loader}") crossorigin="" /> }.to_html();
}

/// Declares the areas: for each, one lazy function that shows any of its
/// pages (the area's chunk), and every page as a variant of [`Page`], which
/// [`LazyPage`] loads.
macro_rules! areas {
    ($($(#[$doc:meta])* $area:ident, $preload:ident { $($variant:ident => $page:ident,)* })*) => {
        /// Every lazy page, named after the path it answers; the variant's
        /// page component is named in [`areas!`]'s list.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Page {
            $($(#[doc = concat!("[`", stringify!($page), "`].")] $variant,)*)*
        }

        impl Page {
            /// The area whose chunk holds the page, as its lazy function is
            /// named: the key of its modules in the split manifest.
            #[cfg(feature = "ssr")]
            fn area(self) -> &'static str {
                match self {
                    $($(Page::$variant)|* => stringify!($area),)*
                }
            }

            /// The page, rendered on the server.
            #[cfg(feature = "ssr")]
            fn show(self) -> AnyView {
                match self {
                    $($(Page::$variant => view! { <$page /> }.erase(),)*)*
                }
            }

            /// The page, once its area's chunk has arrived.
            #[cfg(not(feature = "ssr"))]
            async fn load(self) -> AnyView {
                match self {
                    $($(Page::$variant)|* => $area(self).await,)*
                }
            }

            /// Fetches the page's area chunk.
            #[cfg(target_arch = "wasm32")]
            async fn preload(self) {
                match self {
                    $($(Page::$variant)|* => $preload().await,)*
                }
            }
        }

        $(
            $(#[$doc])*
            #[cfg(not(feature = "ssr"))]
            #[lazy]
            fn $area(page: Page) -> AnyView {
                match page {
                    $(Page::$variant => view! { <$page /> }.erase(),)*
                    // `Page::load` asks each area for its own pages only.
                    #[allow(unreachable_patterns)]
                    _ => view! { <NotFound /> }.erase(),
                }
            }
        )*
    };
}

/// A lazy page as a route's view. Every lazy route has this one view type, so
/// the router's matching and view choosing are compiled for a handful of
/// route types rather than once per page: with Leptos' `Lazy<T>`, a type per
/// page, the router's code in the main module (which every page loads) was
/// 132 KB before `wasm-opt`; it is 102 KB so.
#[derive(Clone, Copy, Debug)]
pub struct LazyPage(pub Page);

impl ChooseView for LazyPage {
    // Rendered when polled, as Leptos' own lazy routes are: the router polls
    // under the route's owner, whose context the page reads.
    #[cfg(feature = "ssr")]
    fn choose(self) -> impl Future<Output = AnyView> {
        let page = self.0;
        async move {
            preload_area(page.area());
            page.show()
        }
    }

    // Boxed, so that each route's arm in the router's `match` only polls a
    // pointer rather than carrying the loading state machine.
    #[cfg(not(feature = "ssr"))]
    fn choose(self) -> impl Future<Output = AnyView> {
        Box::pin(self.0.load()) as std::pin::Pin<Box<dyn Future<Output = AnyView>>>
    }

    // Hydration preloads the chunk before it asks for the view, so that the
    // view is ready at once (as `#[lazy_route]` does).
    fn preload(&self) -> impl Future<Output = ()> {
        let page = self.0;
        async move {
            #[cfg(target_arch = "wasm32")]
            page.preload().await;
            #[cfg(not(target_arch = "wasm32"))]
            let _ = page;
        }
    }
}

areas! {
    /// The sign-in page, which signed-in users never need.
    login_area, __preload_login_area {
        Login => LoginPage,
    }
    /// The start page.
    home_area, __preload_home_area {
        Home => HomePage,
    }
    /// The settings index and the workspace (tenant) settings.
    settings_area, __preload_settings_area {
        Settings => SettingsPage,
        Workspace => WorkspacePage,
    }
    /// Users.
    users_area, __preload_users_area {
        Users => UsersPage,
        User => UserPage,
    }
    /// Teams.
    teams_area, __preload_teams_area {
        Teams => TeamsPage,
        Team => TeamPage,
    }
    /// Opening hours.
    hours_area, __preload_hours_area {
        OpeningHoursList => OpeningHoursListPage,
        OpeningHours => OpeningHoursPage,
    }
    /// System messages: what Rapport sends customers by itself.
    system_messages_area, __preload_system_messages_area {
        SystemMessages => SystemMessagesPage,
        SystemMessage => SystemMessagePage,
    }
    /// Text blocks: the answers agents insert.
    text_blocks_area, __preload_text_blocks_area {
        TextBlocks => TextBlocksPage,
        TextBlock => TextBlockPage,
    }
    /// Flows: messages that rules and agents send as one.
    flows_area, __preload_flows_area {
        Flows => FlowsPage,
        Flow => FlowPage,
    }
    /// Watchdogs.
    watchdogs_area, __preload_watchdogs_area {
        Watchdogs => WatchdogsPage,
        Watchdog => WatchdogPage,
    }
    /// The lists of routing, SLA and action rules.
    rules_area, __preload_rules_area {
        RoutingRules => RoutingRulesPage,
        SlaRules => SlaRulesPage,
        ActionRules => ActionRulesPage,
    }
    /// One routing, SLA or action rule: the rule builder, which the lists do
    /// not need (with it, a list's first load was 404 KB; without, 296 KB).
    rule_area, __preload_rule_area {
        RoutingRule => RoutingRulePage,
        SlaRule => SlaRulePage,
        ActionRule => ActionRulePage,
    }
    /// The webhook endpoints: the list, with the form that adds one.
    webhooks_area, __preload_webhooks_area {
        Webhooks => WebhooksPage,
    }
    /// One webhook endpoint: its settings, secret and delivery log, which the
    /// list does not need.
    webhook_area, __preload_webhook_area {
        Webhook => WebhookPage,
    }
    /// Access: API keys (tenant and platform), the API reference, and the
    /// user's own account with their sign-in sessions.
    keys_area, __preload_keys_area {
        Account => AccountPage,
        ApiKeys => ApiKeysPage,
        PlatformApi => PlatformApiPage,
        ApiReference => ApiReferencePage,
    }
    /// The audit log and the mail outbox.
    audit_area, __preload_audit_area {
        Audit => AuditPage,
        Outbox => OutboxPage,
    }
    /// The platform admin's tenants.
    tenants_area, __preload_tenants_area {
        Tenants => TenantsPage,
        Tenant => TenantPage,
    }
    /// The agents' inbox.
    inbox_area, __preload_inbox_area {
        Inbox => InboxPage,
    }
    /// Full-text search over conversations, customers and notes.
    search_area, __preload_search_area {
        Search => SearchPage,
    }
    /// Each user's notifications.
    notifications_area, __preload_notifications_area {
        Notifications => NotificationsPage,
    }
    /// Recorded visitor sessions: the list, the replay and the live view.
    sessions_area, __preload_sessions_area {
        Sessions => SessionsPage,
        Session => SessionPage,
        SessionLive => SessionLivePage,
    }
    /// The appointments calendar.
    appointments_area, __preload_appointments_area {
        Appointments => AppointmentsPage,
    }
    /// One appointment, new or saved: its form, its invitations and its
    /// recordings, which the calendar does not need.
    appointment_area, __preload_appointment_area {
        NewAppointment => NewAppointmentPage,
        Appointment => AppointmentPage,
    }
    /// Co-browsing and live-view links, and the pages they open.
    links_area, __preload_links_area {
        Links => LinksPage,
        Cobrowse => CobrowsePage,
        Join => JoinPage,
        LiveView => LiveViewPage,
    }
    /// The report dashboards.
    reports_area, __preload_reports_area {
        ReportsIndex => ReportsIndexPage,
        Report => ReportPage,
    }
}
