//! API keys: Settings → Developer tools → API keys (tenant keys, admins) and
//! Settings → API (platform keys, platform admins). One component serves both.

use leptos::prelude::*;
use leptos_meta::Title;
use rapport_core::model::{ApiKey, ApiKeyKind, CreatedApiKey, Role, SessionUser};

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::{EraseView, SyncChildrenFn};
use crate::{
    api::keys::{list_keys, take_created_key, CreateKey, RevokeKey},
    components::{
        feedback::{ActionError, ErrorNote},
        layout::Guard,
        secret::OneTimeSecret,
    },
};

/// Tenant API keys, for admins.
#[component]
pub fn ApiKeysPage() -> impl IntoView {
    view! {
        <Title text="API keys" />
        <KeyManager kind=ApiKeyKind::Tenant allowed=|u| u.role.includes(Role::Admin)>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"API keys"</h1>
            <p class="lead">
                "Integrations call the REST API with one of these keys, as "
                <code>"Authorization: Bearer <key>"</code>" or "<code>"?access_token=<key>"</code>
                ". A key reaches this workspace's data only."
            </p>
        </KeyManager>
    }
}

/// Platform keys, for platform admins.
#[component]
pub fn PlatformApiPage() -> impl IntoView {
    view! {
        <Title text="Platform API" />
        <KeyManager kind=ApiKeyKind::Platform allowed=|u| u.platform_admin>
            <p class="breadcrumb">"Platform"</p>
            <h1>"Platform API"</h1>
            <p class="lead">
                "A private platform key manages tenants over "<code>"/rest/v1/tenant"</code>
                ". It reaches no tenant's data. Keys are yours: they stop working if you lose the platform admin role."
            </p>
        </KeyManager>
    }
}

/// The key list and the create form of `kind`, behind a [`Guard`] with
/// `allowed`, under the page's introduction (`children`).
///
/// Its resources are created here, outside the guard's `Suspense`: the server
/// renders a suspended view twice (once to find its resources, once for real),
/// so a resource created inside it is registered twice there and once in the
/// browser, and hydration then reads the wrong data.
#[component]
fn KeyManager(kind: ApiKeyKind, allowed: fn(&SessionUser) -> bool, children: SyncChildrenFn) -> impl IntoView {
    let create = FormAction::<CreateKey>::new();
    let revoke = FormAction::<RevokeKey>::new();
    let keys = Resource::new(
        move || (create.version().get(), revoke.version().get()),
        move |_| list_keys(kind),
    );
    let flashed = Resource::new(|| (), move |_| take_created_key(kind));
    let created = create.value();
    view! {
        <Guard allowed>
            {children.view()}
            <section class="card">
                <h2>"Create a key"</h2>
                <PostForm action=create>
                    <input type="hidden" name="kind" value=kind.as_str() />
                    <div class="field-row">
                        <div class="field">
                            <label for="key-name">"Name"</label>
                            <input id="key-name" name="name" type="text" required=true maxlength="100" placeholder="e.g. CRM sync" autocomplete="off" />
                        </div>
                        <button type="submit" class="button primary" disabled=move || create.pending().get()>
                            {move || if create.pending().get() { "Creating…" } else { "Create key" }}
                        </button>
                    </div>
                </PostForm>
                <ActionError value=created />
                {move || created.get().and_then(Result::ok).map(|k| view! { <NewKey created=k /> })}
                <Suspense>
                    {move || Suspend::new(async move {
                        flashed.await.ok().flatten().map(|k| view! { <NewKey created=k /> })
                    })}
                </Suspense>
            </section>
            <section class="card">
                <h2>"Keys"</h2>
                <ActionError value=revoke.value() />
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading keys…"</p> }>
                    {move || Suspend::new(async move {
                        match keys.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">"No keys yet. Create one above."</p>
                            }.erase(),
                            Ok(list) => view! { <KeyTable keys=list revoke=revoke /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

#[component]
fn NewKey(created: CreatedApiKey) -> impl IntoView {
    view! { <OneTimeSecret label=format!("Token of “{}”", created.key.name) value=created.token /> }
}

fn when(t: Option<chrono::DateTime<chrono::Utc>>) -> String {
    t.map(|t| t.format("%Y-%m-%d %H:%M UTC").to_string())
        .unwrap_or_else(|| "never".into())
}

#[component]
fn KeyTable(keys: Vec<ApiKey>, revoke: FormAction<RevokeKey>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <thead>
                    <tr>
                        <th scope="col">"Name"</th>
                        <th scope="col">"Key"</th>
                        <th scope="col">"Created"</th>
                        <th scope="col">"Last used"</th>
                        <th scope="col">"Status"</th>
                        <th scope="col"><span class="visually-hidden">"Actions"</span></th>
                    </tr>
                </thead>
                <tbody>
                    {keys
                        .into_iter()
                        .map(|k| {
                            let revoked = k.revoked_at.is_some();
                            let kind = k.kind.as_str();
                            let label = format!("Revoke {}", k.name);
                            view! {
                                <tr class:revoked=revoked>
                                    <td>{k.name.clone()}</td>
                                    <td><code>{format!("{}…", k.prefix)}</code></td>
                                    <td>{when(Some(k.created_at))}</td>
                                    <td>{when(k.last_used_at)}</td>
                                    <td>
                                        {if revoked {
                                            view! { <span class="badge muted">"Revoked"</span> }.erase()
                                        } else {
                                            view! { <span class="badge ok">"Active"</span> }.erase()
                                        }}
                                    </td>
                                    <td>
                                        {(!revoked).then(|| view! {
                                            <PostForm action=revoke>
                                                <input type="hidden" name="kind" value=kind />
                                                <input type="hidden" name="id" value=k.id.clone() />
                                                <button type="submit" class="button danger small" aria-label=label.clone()>"Revoke"</button>
                                            </PostForm>
                                        })}
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
