//! The platform admin's tenants: `/platform/tenants` lists, searches and
//! creates them (with a first admin whose password is shown once);
//! `/platform/tenants/{id}` renames one, changes its slug or time zone, or
//! deletes it with all its data.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::route::use_path_param;
use rapport_core::model::Tenant;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        problem::Problem,
        tenants::{
            get_tenant, list_tenants, take_created_tenant, CreateTenant, CreatedTenant, DeleteTenant, EditTenant,
            TENANTS_PATH,
        },
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, successes, ActionError, ErrorNote, FieldMessage},
        layout::Guard,
        secret::OneTimeSecret,
        zones::{load_zone_names, ZoneNames, ZonesResource},
    },
};

fn platform_admins(user: &rapport_core::model::SessionUser) -> bool {
    user.platform_admin
}

/// `/platform/tenants`: list, search, create.
#[component]
pub fn TenantsPage() -> impl IntoView {
    let create = FormAction::<CreateTenant>::new();
    let query = use_query_map();
    let search = move || query.with(|q| q.get("q")).unwrap_or_default();
    let tenants = Resource::new(move || create.version().get(), |_| list_tenants());
    let flashed = Resource::new(|| (), |_| take_created_tenant());
    let zones = load_zone_names();
    let created = create.value();
    let problem = action_problem(created);
    view! {
        <Title text="Tenants" />
        <Guard allowed=platform_admins>
            <p class="breadcrumb">"Platform"</p>
            <h1>"Tenants"</h1>
            <p class="lead">"Each tenant is a separate workspace with its own users, settings and data."</p>
            <section class="card">
                <h2>"Create a tenant"</h2>
                <PostForm action=create>
                    <div class="grid-form">
                        <TenantFields tenant=None problem zones />
                        <div class="field">
                            <label for="tenant-admin">"First admin's e-mail " <span class="optional">"(optional)"</span></label>
                            <input id="tenant-admin" name="admin_email" type="email" autocomplete="off"
                                aria-invalid=field_invalid(problem, "adminEmail") aria-describedby="tenant-admin-error" />
                            <FieldMessage problem field="adminEmail" id="tenant-admin-error" />
                        </div>
                    </div>
                    <button type="submit" class="button primary" disabled=move || create.pending().get()>"Create tenant"</button>
                </PostForm>
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
                <form method="get" action=TENANTS_PATH class="field-row" role="search">
                    <div class="field">
                        <label for="tenant-search">"Find a tenant"</label>
                        <input id="tenant-search" name="q" type="search" value=search autocomplete="off" />
                    </div>
                    <button type="submit" class="button secondary">"Search"</button>
                </form>
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading tenants…"</p> }>
                    {move || Suspend::new(async move {
                        let needle = search().trim().to_lowercase();
                        match tenants.await {
                            Ok(list) => {
                                let list: Vec<Tenant> = list
                                    .into_iter()
                                    .filter(|t| needle.is_empty() || t.name.to_lowercase().contains(&needle) || t.slug.contains(&needle))
                                    .collect();
                                if list.is_empty() {
                                    view! { <p class="empty">"No tenant matches."</p> }.erase()
                                } else {
                                    view! { <TenantTable tenants=list /> }.erase()
                                }
                            }
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

/// Name, slug and time zone, shared by the create and edit forms.
#[component]
fn TenantFields(tenant: Option<Tenant>, problem: Signal<Option<Problem>>, zones: ZonesResource) -> impl IntoView {
    let prefix = if tenant.is_some() { "edit" } else { "new" };
    let id = move |name: &str| format!("{prefix}-tenant-{name}");
    let editing = tenant.is_some();
    let (name, slug, timezone) = tenant
        .map(|t| (t.name, t.slug, t.timezone))
        .unwrap_or_else(|| (String::new(), String::new(), "UTC".to_string()));
    view! {
        <div class="field">
            <label for=id("name")>"Name"</label>
            <input id=id("name") name="name" type="text" required=true maxlength="200" value=name autocomplete="off"
                aria-invalid=field_invalid(problem, "name") aria-describedby=id("name-error") />
            <FieldMessage problem field="name" id=id("name-error") />
        </div>
        <div class="field">
            <label for=id("slug")>"Slug " {(!editing).then(|| view! { <span class="optional">"(optional)"</span> })}</label>
            <input id=id("slug") name="slug" type="text" value=slug required=editing pattern="[a-z0-9][a-z0-9-]{1,62}"
                placeholder="derived from the name" autocomplete="off"
                aria-invalid=field_invalid(problem, "slug") aria-describedby=format!("{} {}", id("slug-hint"), id("slug-error")) />
            <p class="hint" id=id("slug-hint")>"Lower-case letters, digits and dashes; sign-in and URLs use it."</p>
            <FieldMessage problem field="slug" id=id("slug-error") />
        </div>
        <div class="field">
            <label for=id("timezone")>"Time zone"</label>
            <input id=id("timezone") name="timezone" type="text" list=id("zones") value=timezone autocomplete="off"
                aria-invalid=field_invalid(problem, "timezone") aria-describedby=format!("{} {}", id("timezone-hint"), id("timezone-error")) />
            <p class="hint" id=id("timezone-hint")>"An IANA zone such as Europe/Berlin. Reports are cut into days in it."</p>
            <ZoneNames zones id=id("zones") />
            <FieldMessage problem field="timezone" id=id("timezone-error") />
        </div>
    }
}

/// `/platform/tenants/{id}`: edit or delete.
#[component]
pub fn TenantPage() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditTenant>::new();
    let remove = FormAction::<DeleteTenant>::new();
    let edit_saved = successes(edit.value());
    let tenant = Resource::new(move || (id(), edit_saved.get()), |(id, _)| get_tenant(id));
    let zones = load_zone_names();
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: TENANTS_PATH,
        crumb: "Platform › Tenants".into(),
        text: "Back to the tenants".into(),
    };
    let render = move |t: Tenant| {
        let (edit_id, remove_id) = (t.id.to_string(), t.id.to_string());
        view! {
            <h1>{t.name.clone()}</h1>
            <p class="lead">"Id " <code class="id">{t.id.to_string()}</code> ", created " {t.created_at.format("%Y-%m-%d").to_string()} "."</p>
            <EditCard title="Tenant" action=edit id=edit_id>
                <div class="grid-form">
                    <TenantFields tenant=Some(t.clone()) problem zones />
                </div>
            </EditCard>
            <DeleteCard title="Delete the tenant" summary="Delete this tenant…"
                consequence="Deletes its users, conversations, settings, reports and keys. Refused while it holds the last platform admin. This cannot be undone."
                action=remove id=remove_id />
        }
    };
    view! {
        <Title text="Tenant" />
        <DetailFrame title="Tenant" allowed=platform_admins back loading="Loading the tenant…" load=move || tenant render />
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
fn TenantTable(tenants: Vec<Tenant>) -> impl IntoView {
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
                    </tr>
                </thead>
                <tbody>
                    {tenants
                        .into_iter()
                        .map(|t| {
                            view! {
                                <tr>
                                    <td><a href=format!("{TENANTS_PATH}/{}", t.id)>{t.name.clone()}</a></td>
                                    <td><code>{t.slug.clone()}</code></td>
                                    <td>{t.timezone.clone()}</td>
                                    <td>{t.created_at.format("%Y-%m-%d").to_string()}</td>
                                    <td><code class="id">{t.id.to_string()}</code></td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}
