//! The lazy routes. Pages are grouped in areas: each settings resource (its
//! list and its detail page) is one, and so are the inbox, appointments, links
//! and reports. Each area is compiled into its own wasm chunk, which the
//! browser fetches the first time one of its pages is shown (the server
//! preloads the chunks of the page it renders). The first load carries only the
//! shell, the router, the layout, the start and login pages.
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
use leptos_router::LazyRoute;

use crate::erase::EraseView;
use crate::pages::{
    account::AccountPage,
    api_keys::{ApiKeysPage, PlatformApiPage},
    api_reference::ApiReferencePage,
    appointments::{AppointmentPage, AppointmentsPage, NewAppointmentPage},
    audit::AuditPage,
    flows::{FlowPage, FlowsPage},
    inbox::InboxPage,
    link_tools::LinksPage,
    links::{CobrowsePage, JoinPage, LiveViewPage},
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
    webhooks::{WebhookPage, WebhooksPage},
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
                    $($pages::$page => view! { <$page /> }.erase(),)*
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
    /// The settings index and the workspace (tenant) settings.
    settings_area, __preload_settings_area, SettingsPages {
        SettingsRoute => SettingsPage,
        WorkspaceRoute => WorkspacePage,
    }
}

lazy_area! {
    /// Users.
    users_area, __preload_users_area, UserPages {
        UsersRoute => UsersPage,
        UserRoute => UserPage,
    }
}

lazy_area! {
    /// Teams.
    teams_area, __preload_teams_area, TeamPages {
        TeamsRoute => TeamsPage,
        TeamRoute => TeamPage,
    }
}

lazy_area! {
    /// Opening hours.
    hours_area, __preload_hours_area, HoursPages {
        OpeningHoursListRoute => OpeningHoursListPage,
        OpeningHoursRoute => OpeningHoursPage,
    }
}

lazy_area! {
    /// System messages, text blocks and flows: what rules and agents send to
    /// customers.
    messages_area, __preload_messages_area, MessagePages {
        SystemMessagesRoute => SystemMessagesPage,
        SystemMessageRoute => SystemMessagePage,
        TextBlocksRoute => TextBlocksPage,
        TextBlockRoute => TextBlockPage,
        FlowsRoute => FlowsPage,
        FlowRoute => FlowPage,
    }
}

lazy_area! {
    /// Watchdogs.
    watchdogs_area, __preload_watchdogs_area, WatchdogPages {
        WatchdogsRoute => WatchdogsPage,
        WatchdogRoute => WatchdogPage,
    }
}

lazy_area! {
    /// Routing, SLA and action rules (they share the rule builder).
    rules_area, __preload_rules_area, RulePages {
        RoutingRulesRoute => RoutingRulesPage,
        RoutingRuleRoute => RoutingRulePage,
        SlaRulesRoute => SlaRulesPage,
        SlaRuleRoute => SlaRulePage,
        ActionRulesRoute => ActionRulesPage,
        ActionRuleRoute => ActionRulePage,
    }
}

lazy_area! {
    /// Webhooks and their delivery logs.
    webhooks_area, __preload_webhooks_area, WebhookPages {
        WebhooksRoute => WebhooksPage,
        WebhookRoute => WebhookPage,
    }
}

lazy_area! {
    /// Access: API keys (tenant and platform), the API reference, and the
    /// user's own account with their sign-in sessions.
    keys_area, __preload_keys_area, KeyPages {
        AccountRoute => AccountPage,
        ApiKeysRoute => ApiKeysPage,
        PlatformApiRoute => PlatformApiPage,
        ApiReferenceRoute => ApiReferencePage,
    }
}

lazy_area! {
    /// The audit log and the mail outbox.
    audit_area, __preload_audit_area, AuditPages {
        AuditRoute => AuditPage,
        OutboxRoute => OutboxPage,
    }
}

lazy_area! {
    /// The platform admin's tenants.
    tenants_area, __preload_tenants_area, TenantPages {
        TenantsRoute => TenantsPage,
        TenantRoute => TenantPage,
    }
}

lazy_area! {
    /// The agents' inbox, its search, and each user's notifications.
    inbox_area, __preload_inbox_area, InboxPages {
        InboxRoute => InboxPage,
        SearchRoute => SearchPage,
        NotificationsRoute => NotificationsPage,
    }
}

lazy_area! {
    /// Recorded visitor sessions: the list, the replay and the live view.
    sessions_area, __preload_sessions_area, SessionPages {
        SessionsRoute => SessionsPage,
        SessionRoute => SessionPage,
        SessionLiveRoute => SessionLivePage,
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
