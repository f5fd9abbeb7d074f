//! `/settings`: the settings sections the signed-in user's role opens, and the
//! start page's cards. One list, so a new section appears in both.

use leptos::prelude::*;
use leptos_meta::Title;
use rapport_core::model::SessionUser;

use crate::components::layout::{admins, supervisors, Guard, UserResource};

/// A place in the dashboard, as a card.
pub struct Destination {
    /// Where it is.
    pub href: &'static str,
    /// Its name.
    pub title: &'static str,
    /// What one does there.
    pub about: &'static str,
    /// Who may open it.
    pub visible: fn(&SessionUser) -> bool,
}

/// The settings sections.
pub const SETTINGS: &[Destination] = &[
    Destination {
        href: "/settings/workspace",
        title: "Workspace",
        about: "Name, time zone for reports, and the widget key.",
        visible: admins,
    },
    Destination {
        href: "/settings/users",
        title: "Users",
        about: "Agents, supervisors and admins: roles, tags and passwords.",
        visible: admins,
    },
    Destination {
        href: "/settings/teams",
        title: "Teams",
        about: "Groups of agents that conversations are routed and assigned to.",
        visible: admins,
    },
    Destination {
        href: "/settings/opening-hours",
        title: "Opening hours",
        about: "Weekly hours and holidays that routing and SLA rules refer to.",
        visible: admins,
    },
    Destination {
        href: "/settings/system-messages",
        title: "System messages",
        about: "Texts sent to customers, such as “all agents are busy”, one per language.",
        visible: admins,
    },
    Destination {
        href: "/settings/text-blocks",
        title: "Text blocks",
        about: "Answers agents insert in a conversation with / and a shortcut, in the customer's language.",
        visible: admins,
    },
    Destination {
        href: "/settings/flows",
        title: "Flows",
        about: "Messages and cards a routing or action rule sends to customers, one after the other.",
        visible: admins,
    },
    Destination {
        href: "/settings/routing-rules",
        title: "Routing rules",
        about: "Who gets a new conversation, with else-rules when a rule does not match.",
        visible: admins,
    },
    Destination {
        href: "/settings/sla-rules",
        title: "SLA rules",
        about: "Response times to meet, and who hears of a miss.",
        visible: admins,
    },
    Destination {
        href: "/settings/action-rules",
        title: "Action rules",
        about: "When visitors see the chat button, and when the chat opens by itself with a message, the offline form or a call.",
        visible: admins,
    },
    Destination {
        href: "/settings/watchdogs",
        title: "Watchdogs",
        about: "Alerts on script errors, messages, assignments, forms and setting changes.",
        visible: admins,
    },
    Destination {
        href: "/settings/webhooks",
        title: "Webhooks",
        about: "Endpoints that receive events, their secrets and delivery log.",
        visible: admins,
    },
    Destination {
        href: "/settings/outbox",
        title: "Mail outbox",
        about: "Every mail Rapport wrote, such as invitations, and whether it was sent.",
        visible: admins,
    },
    Destination {
        href: "/settings/api-keys",
        title: "API keys",
        about: "Keys integrations use to call the REST API.",
        visible: admins,
    },
    Destination {
        href: "/settings/audit",
        title: "Audit log",
        about: "Who changed what, when and from where.",
        visible: supervisors,
    },
];

/// Cards for the destinations `user` may open.
#[component]
pub fn DestinationCards(destinations: &'static [Destination], user: SessionUser) -> impl IntoView {
    view! {
        <div class="cards">
            {destinations
                .iter()
                .filter(|d| (d.visible)(&user))
                .map(|d| view! {
                    <a class="card link-card" href=d.href>
                        <h2>{d.title}</h2>
                        <p>{d.about}</p>
                    </a>
                })
                .collect_view()}
        </div>
    }
}

/// `/settings`.
#[component]
pub fn SettingsPage() -> impl IntoView {
    let user = expect_context::<UserResource>();
    view! {
        <Title text="Settings" />
        <Guard allowed=supervisors>
            <h1>"Settings"</h1>
            <Suspense>
                {move || Suspend::new(async move {
                    user.await.ok().flatten().map(|user| view! { <DestinationCards destinations=SETTINGS user /> })
                })}
            </Suspense>
        </Guard>
    }
}
