//! The start page: who you are, and where you can go from here.

use crate::{
    components::layout::{agents, supervisors, UserResource},
    pages::settings::{Destination, DestinationCards},
};
use leptos::prelude::*;
use leptos_meta::Title;

/// Where the start page points.
const START: &[Destination] = &[
    Destination {
        href: "/inbox",
        title: "Inbox",
        about: "Answer conversations as they arrive, assign them, and close them.",
        visible: agents,
    },
    Destination {
        href: "/links",
        title: "Links",
        about: "Co-browse with a customer, or watch a visitor's session live.",
        visible: agents,
    },
    Destination {
        href: "/reports",
        title: "Reports",
        about: "Agents, conversations, visits and more, per day, against the previous period.",
        visible: supervisors,
    },
    Destination {
        href: "/settings",
        title: "Settings",
        about: "Users, opening hours, webhooks, API keys and the audit log.",
        visible: supervisors,
    },
    Destination {
        href: "/platform/tenants",
        title: "Tenants",
        about: "Create, list and remove the workspaces of this installation.",
        visible: |u| u.platform_admin,
    },
    Destination {
        href: "/platform/api",
        title: "Platform API",
        about: "Private keys for managing tenants over the REST API.",
        visible: |u| u.platform_admin,
    },
    Destination {
        href: "/docs/api",
        title: "API reference",
        about: "Every REST operation, its parameters, bodies and errors.",
        visible: |_| true,
    },
];

/// The start page.
#[component]
pub fn HomePage() -> impl IntoView {
    let user = expect_context::<UserResource>();
    view! {
        <Title text="Home" />
        <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let u = user.await.ok().flatten()?;
                Some(view! {
                    <h1>{format!("Welcome, {}", u.name())}</h1>
                    <p class="lead">{format!("You are signed in to {} as {}.", u.tenant_name, u.role.label().to_lowercase())}</p>
                    <DestinationCards destinations=START user=u.clone() />
                })
            })}
        </Suspense>
    }
}
