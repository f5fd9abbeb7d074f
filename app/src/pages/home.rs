//! The start page: who you are, and where you can go from here.

use leptos::prelude::*;
use leptos_meta::Title;
use rapport_core::model::Role;

use crate::components::layout::UserResource;

/// The start page.
#[component]
pub fn HomePage() -> impl IntoView {
    let user = expect_context::<UserResource>();
    view! {
        <Title text="Home" />
        <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let u = user.await.ok().flatten()?;
                let admin = u.role.includes(Role::Admin);
                let platform = u.platform_admin;
                Some(view! {
                    <h1>{format!("Welcome, {}", u.name())}</h1>
                    <p class="lead">{format!("You are signed in to {} as {}.", u.tenant_name, u.role.label().to_lowercase())}</p>
                    <div class="cards">
                        {admin.then(|| view! {
                            <a class="card link-card" href="/settings/api-keys">
                                <h2>"API keys"</h2>
                                <p>"Create and revoke the keys integrations use to call the REST API."</p>
                            </a>
                        })}
                        {platform.then(|| view! {
                            <a class="card link-card" href="/platform/tenants">
                                <h2>"Tenants"</h2>
                                <p>"Create, list and remove the workspaces of this installation."</p>
                            </a>
                            <a class="card link-card" href="/settings/api">
                                <h2>"Platform API"</h2>
                                <p>"Private keys for managing tenants over the REST API."</p>
                            </a>
                        })}
                        <a class="card link-card" href="/docs/api">
                            <h2>"API reference"</h2>
                            <p>"Every REST operation, its parameters, bodies and errors."</p>
                        </a>
                    </div>
                })
            })}
        </Suspense>
    }
}
