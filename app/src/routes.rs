//! The lazy routes. Pages are grouped in areas (admin, inbox, appointments,
//! links, reports); each area is compiled into its own wasm chunk, which the
//! browser fetches the first time one of its pages is shown (the server
//! preloads the chunk of the page it renders). The first load carries only the
//! shell, the router, the layout, the start and login pages.
//!
//! Why areas and not a chunk per page: the splitter puts code shared by any
//! set of split points into a chunk of its own, so 35 page-sized split points
//! gave some 600 files, and a page needed 50 to 230 requests. Five areas give
//! a handful, and moving between pages of an area needs no request at all.
//! Splitting the admin area further (settings, rules, platform) was tried: it
//! made 87 shared chunks instead of 24 and lightened no page, because the
//! settings pages alone carry most of the admin area's code.
//!
//! Nothing outside this module may name a page listed here, or its code is
//! pulled back into the main module.

#[cfg(not(feature = "ssr"))]
use leptos::lazy;
use leptos::prelude::*;
use leptos_router::LazyRoute;

use crate::pages::{
    api_keys::{ApiKeysPage, PlatformApiPage},
    api_reference::ApiReferencePage,
    appointments::{AppointmentPage, AppointmentsPage, NewAppointmentPage},
    audit::AuditPage,
    inbox::InboxPage,
    link_tools::LinksPage,
    links::{CobrowsePage, JoinPage, LiveViewPage},
    opening_hours::{OpeningHoursListPage, OpeningHoursPage},
    outbox::OutboxPage,
    reports::{ReportPage, ReportsIndexPage},
    rules::{RoutingRulePage, RoutingRulesPage, SlaRulePage, SlaRulesPage},
    settings::SettingsPage,
    system_messages::{SystemMessagePage, SystemMessagesPage},
    teams::{TeamPage, TeamsPage},
    tenants::{TenantPage, TenantsPage},
    users::{UserPage, UsersPage},
    watchdogs::{WatchdogPage, WatchdogsPage},
    webhooks::{WebhookPage, WebhooksPage},
    workspace::WorkspacePage,
};

/// On the server: the `<link rel="preload">` tags for an area's chunks (from
/// the manifest the build writes), so the browser fetches them alongside the
/// main module rather than after it.
///
/// Leptos 0.8 can do this by itself when a lazy function runs during server
/// rendering, but it only keeps the record if the function runs in a narrow
/// window of its renderer's set-up: in release builds `/inbox` and `/reports`
/// missed it. So the server renders area pages directly, and names their
/// chunks here.
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
    let files: Vec<String> = modules
        .iter()
        .filter(|(key, _)| {
            key.strip_prefix(&prefix)
                .is_some_and(|suffix| !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_digit()))
        })
        .flat_map(|(_, files)| files.iter().cloned())
        .collect();
    // Rendering a `Link` registers it for the page's `<head>` and writes
    // nothing where it stands, so the page's body (which the browser hydrates
    // without these calls) stays the same.
    for file in files {
        let _ = view! {
            <Link rel="preload" href=format!("{pkg}/{file}.wasm") as_="fetch" type_="application/wasm" crossorigin="" />
        }
        .to_html();
    }
    let _ = view! { <Link rel="modulepreload" href=format!("{pkg}/{loader}") crossorigin="" /> }.to_html();
}

/// Declares an area: an enum of its pages, one lazy function that shows any of
/// them (the area's chunk), and for each `Route => Page` a lazy route that
/// calls it.
macro_rules! lazy_area {
    ($(#[$doc:meta])* $area:ident, $preload:ident, $pages:ident { $($route:ident => $page:ident,)* }) => {
        /// The pages of one area, each named after the component it shows.
        #[derive(Clone, Copy, Debug)]
        #[allow(clippy::enum_variant_names)]
        pub enum $pages {
            $(#[doc = concat!("[`", stringify!($page), "`].")] $page,)*
        }

        impl $pages {
            /// The page. In the browser only the area's chunk reaches this.
            fn show(self) -> AnyView {
                match self {
                    $($pages::$page => view! { <$page /> }.into_any(),)*
                }
            }
        }

        $(#[$doc])*
        #[cfg(not(feature = "ssr"))]
        #[lazy]
        fn $area(page: $pages) -> AnyView {
            page.show()
        }

        $(
            #[doc = concat!("[`", stringify!($page), "`], in its area's chunk.")]
            pub struct $route;

            impl LazyRoute for $route {
                fn data() -> Self {
                    $route
                }

                async fn view(_this: Self) -> AnyView {
                    #[cfg(feature = "ssr")]
                    {
                        preload_area(stringify!($area));
                        $pages::$page.show()
                    }
                    #[cfg(not(feature = "ssr"))]
                    $area($pages::$page).await
                }

                // Hydration preloads the chunk before it asks for the view, so
                // that the view is ready at once (as `#[lazy_route]` does).
                async fn preload() {
                    #[cfg(target_arch = "wasm32")]
                    $preload().await;
                }
            }
        )*
    };
}

lazy_area! {
    /// Settings, the audit log, the platform admin's pages and the API reference.
    admin_area, __preload_admin_area, AdminPages {
        ApiKeysRoute => ApiKeysPage,
        PlatformApiRoute => PlatformApiPage,
        ApiReferenceRoute => ApiReferencePage,
        AuditRoute => AuditPage,
        OpeningHoursListRoute => OpeningHoursListPage,
        OpeningHoursRoute => OpeningHoursPage,
        OutboxRoute => OutboxPage,
        RoutingRulesRoute => RoutingRulesPage,
        RoutingRuleRoute => RoutingRulePage,
        SlaRulesRoute => SlaRulesPage,
        SlaRuleRoute => SlaRulePage,
        SettingsRoute => SettingsPage,
        SystemMessagesRoute => SystemMessagesPage,
        SystemMessageRoute => SystemMessagePage,
        TeamsRoute => TeamsPage,
        TeamRoute => TeamPage,
        TenantsRoute => TenantsPage,
        TenantRoute => TenantPage,
        UsersRoute => UsersPage,
        UserRoute => UserPage,
        WatchdogsRoute => WatchdogsPage,
        WatchdogRoute => WatchdogPage,
        WebhooksRoute => WebhooksPage,
        WebhookRoute => WebhookPage,
        WorkspaceRoute => WorkspacePage,
    }
}

lazy_area! {
    /// The agents' inbox.
    inbox_area, __preload_inbox_area, InboxPages {
        InboxRoute => InboxPage,
    }
}

lazy_area! {
    /// The appointments calendar and forms.
    appointments_area, __preload_appointments_area, AppointmentPages {
        AppointmentsRoute => AppointmentsPage,
        NewAppointmentRoute => NewAppointmentPage,
        AppointmentRoute => AppointmentPage,
    }
}

lazy_area! {
    /// Co-browsing and live-view links, and the pages they open.
    links_area, __preload_links_area, LinkPages {
        LinksRoute => LinksPage,
        CobrowseRoute => CobrowsePage,
        JoinRoute => JoinPage,
        LiveViewRoute => LiveViewPage,
    }
}

lazy_area! {
    /// The report dashboards.
    reports_area, __preload_reports_area, ReportPages {
        ReportsIndexRoute => ReportsIndexPage,
        ReportRoute => ReportPage,
    }
}
