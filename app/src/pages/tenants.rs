//! The platform admin's tenants page.

use leptos::prelude::*;
use leptos_meta::Title;
use rapport_core::model::Tenant;

use crate::{
    api::tenants::{list_tenants, take_created_tenant, CreateTenant, CreatedTenant, DeleteTenant},
    components::{
        feedback::{ActionError, ErrorNote},
        layout::Guard,
        secret::OneTimeSecret,
    },
};

/// Common IANA zones offered while typing; any valid zone is accepted.
const ZONES: &[&str] = &[
    "UTC",
    "Europe/London",
    "Europe/Dublin",
    "Europe/Lisbon",
    "Europe/Paris",
    "Europe/Berlin",
    "Europe/Vienna",
    "Europe/Zurich",
    "Europe/Madrid",
    "Europe/Rome",
    "Europe/Amsterdam",
    "Europe/Brussels",
    "Europe/Stockholm",
    "Europe/Warsaw",
    "Europe/Prague",
    "Europe/Athens",
    "Europe/Helsinki",
    "Europe/Kyiv",
    "Europe/Istanbul",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Los_Angeles",
    "America/Toronto",
    "America/Mexico_City",
    "America/Sao_Paulo",
    "Asia/Dubai",
    "Asia/Kolkata",
    "Asia/Singapore",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Asia/Seoul",
    "Australia/Sydney",
    "Pacific/Auckland",
    "Africa/Johannesburg",
    "Africa/Lagos",
];

/// Tenants: list, create, delete.
#[component]
pub fn TenantsPage() -> impl IntoView {
    let create = ServerAction::<CreateTenant>::new();
    let delete = ServerAction::<DeleteTenant>::new();
    let tenants = Resource::new(
        move || (create.version().get(), delete.version().get()),
        |_| list_tenants(),
    );
    let flashed = Resource::new(|| (), |_| take_created_tenant());
    let created = create.value();
    view! {
        <Title text="Tenants" />
        <Guard allowed=|u| u.platform_admin>
            <p class="breadcrumb">"Platform"</p>
            <h1>"Tenants"</h1>
            <p class="lead">"Each tenant is a separate workspace with its own users, settings and data."</p>
            <section class="card">
                <h2>"Create a tenant"</h2>
                <ActionForm action=create>
                    <div class="grid-form">
                        <div class="field">
                            <label for="tenant-name">"Name"</label>
                            <input id="tenant-name" name="name" type="text" required=true maxlength="200" />
                        </div>
                        <div class="field">
                            <label for="tenant-slug">"Slug " <span class="optional">"(optional)"</span></label>
                            <input id="tenant-slug" name="slug" type="text" pattern="[a-z0-9][a-z0-9-]{1,62}" placeholder="derived from the name" />
                        </div>
                        <div class="field">
                            <label for="tenant-timezone">"Time zone"</label>
                            <input id="tenant-timezone" name="timezone" type="text" list="timezones" value="UTC" />
                            <datalist id="timezones">
                                {ZONES.iter().map(|z| view! { <option value=*z></option> }).collect_view()}
                            </datalist>
                        </div>
                        <div class="field">
                            <label for="tenant-admin">"First admin's e-mail " <span class="optional">"(optional)"</span></label>
                            <input id="tenant-admin" name="admin_email" type="email" />
                        </div>
                    </div>
                    <button type="submit" class="button primary" disabled=move || create.pending().get()>"Create tenant"</button>
                </ActionForm>
                <ActionError value=created />
                {move || created.get().and_then(Result::ok).map(|t| view! { <Created created=t /> })}
                <Suspense>
                    {move || Suspend::new(async move {
                        flashed.await.ok().flatten().map(|t| view! { <Created created=t /> })
                    })}
                </Suspense>
            </section>
            <section class="card">
                <h2>"All tenants"</h2>
                <ActionError value=delete.value() />
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading tenants…"</p> }>
                    {move || Suspend::new(async move {
                        match tenants.await {
                            Ok(list) => view! { <TenantTable tenants=list delete=delete /> }.into_any(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.into_any(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

#[component]
fn Created(created: CreatedTenant) -> impl IntoView {
    view! {
        <p class="note ok" role="status">{format!("Tenant “{}” created (slug {}).", created.tenant.name, created.tenant.slug)}</p>
        {created.admin_password.map(|p| {
            let email = created.admin_email.clone().unwrap_or_default();
            view! { <OneTimeSecret label=format!("Password of {email}") value=p /> }
        })}
    }
}

#[component]
fn TenantTable(tenants: Vec<Tenant>, delete: ServerAction<DeleteTenant>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <thead>
                    <tr>
                        <th scope="col">"Name"</th>
                        <th scope="col">"Slug"</th>
                        <th scope="col">"Time zone"</th>
                        <th scope="col">"Created"</th>
                        <th scope="col">"Id"</th>
                        <th scope="col"><span class="visually-hidden">"Actions"</span></th>
                    </tr>
                </thead>
                <tbody>
                    {tenants
                        .into_iter()
                        .map(|t| {
                            let label = format!("Delete tenant {}", t.name);
                            view! {
                                <tr>
                                    <td>{t.name.clone()}</td>
                                    <td><code>{t.slug.clone()}</code></td>
                                    <td>{t.timezone.clone()}</td>
                                    <td>{t.created_at.format("%Y-%m-%d").to_string()}</td>
                                    <td><code class="id">{t.id.clone()}</code></td>
                                    <td>
                                        <ActionForm action=delete>
                                            <input type="hidden" name="id" value=t.id.clone() />
                                            <button type="submit" class="button danger small" aria-label=label>"Delete"</button>
                                        </ActionForm>
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}
