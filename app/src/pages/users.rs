//! Settings → Users (admins): `/settings/users` searches, pages and adds users;
//! `/settings/users/{id}` edits one, resets their password or deletes them.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::route::use_path_param;
use rapport_core::model::Role;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        problem::Problem,
        users::{
            get_user, list_users, take_user_password, AddUser, EditUser, PasswordShown, RemoveUser, ResetUserPassword,
            UserList, UserView, USERS_PATH,
        },
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, reset_on_success, successes, ActionError, ErrorNote, FieldMessage},
        layout::{admins, encode_query, Guard},
        lists::Pager,
        secret::OneTimeSecret,
    },
};

/// `/settings/users`.
#[component]
pub fn UsersPage() -> impl IntoView {
    view! {
        <Title text="Users" />
        <UserDirectory />
    }
}

#[component]
fn UserDirectory() -> impl IntoView {
    let add = FormAction::<AddUser>::new();
    let query = use_query_map();
    let search = move || query.with(|q| q.get("q")).unwrap_or_default();
    let page = move || {
        query
            .with(|q| q.get("page"))
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let users = Resource::new(
        move || (search(), page(), add.version().get()),
        |(search, page, _)| list_users(Some(search), Some(page)),
    );
    let flashed = Resource::new(|| (), |_| take_user_password());
    let form = NodeRef::new();
    reset_on_success(add.value(), form);
    // Its resources are created above, outside the guard's `Suspense` (see `Guard`).
    view! {
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Users"</h1>
            <p class="lead">"Agents answer conversations, supervisors also read reports, admins also change settings."</p>
            <section class="card">
                <h2>"Add a user"</h2>
                <PostForm action=add node_ref=form attr:data-unsaved-guard="">
                    <UserFields user=None problem=action_problem(add.value()) />
                    <div class="field">
                        <label for="user-password">"Password (optional)"</label>
                        <input id="user-password" name="password" type="password" minlength="8" maxlength="256"
                            autocomplete="new-password" aria-describedby="user-password-hint user-password-error"
                            aria-invalid=field_invalid(action_problem(add.value()), "password") />
                        <p class="hint" id="user-password-hint">"Leave empty and Rapport generates one, shown once."</p>
                        <FieldMessage problem=action_problem(add.value()) field="password" id="user-password-error" />
                    </div>
                    <button type="submit" class="button primary" disabled=move || add.pending().get()>"Add user"</button>
                </PostForm>
                <ActionError value=add.value() />
                {move || add.value().get().and_then(Result::ok).map(|shown| view! { <PasswordNote shown /> })}
                <Suspense>
                    {move || Suspend::new(async move {
                        flashed.await.ok().flatten().map(|shown| view! { <PasswordNote shown /> })
                    })}
                </Suspense>
            </section>
            <section class="card">
                <h2>"Users"</h2>
                <form method="get" action=USERS_PATH class="field-row" role="search">
                    <div class="field">
                        <label for="user-search">"Search by e-mail or name"</label>
                        <input id="user-search" name="q" type="search" value=search autocomplete="off" />
                    </div>
                    <button type="submit" class="button secondary">"Search"</button>
                </form>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading users…"</p> }>
                    {move || Suspend::new(async move {
                        match users.await {
                            Ok(list) if list.users.is_empty() => view! {
                                <p class="empty">"No user matches. Try another search."</p>
                            }.erase(),
                            Ok(list) => view! { <UserTable list search=search() /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
        </Guard>
    }
}

#[component]
fn PasswordNote(shown: PasswordShown) -> impl IntoView {
    let who = shown.user.email.clone();
    match shown.password {
        Some(password) => view! { <OneTimeSecret label=format!("Password of {who}") value=password /> }.erase(),
        None => view! { <p class="note ok" role="status">{format!("{who} can now sign in with the password you chose.")}</p> }
            .erase(),
    }
}

/// The fields shared by the add and edit forms, named `form[…]` for [`crate::api::users::UserForm`].
#[component]
fn UserFields(user: Option<UserView>, problem: Signal<Option<Problem>>) -> impl IntoView {
    let u = user.unwrap_or(UserView {
        id: String::new(),
        email: String::new(),
        external_id: None,
        display_name: None,
        description: None,
        role: Role::Agent,
        tags: Vec::new(),
        mco_enabled: false,
        max_concurrent_chats: None,
        has_password: false,
    });
    let prefix = if u.id.is_empty() { "new" } else { "edit" };
    let id = move |name: &str| format!("{prefix}-user-{name}");
    view! {
        <div class="field-row">
            <div class="field">
                <label for=id("email")>"E-mail"</label>
                <input id=id("email") name="form[email]" type="email" required=true maxlength="254" value=u.email.clone()
                    autocomplete="off" aria-invalid=field_invalid(problem, "email") aria-describedby=id("email-error") />
                <FieldMessage problem field="email" id=id("email-error") />
            </div>
            <div class="field">
                <label for=id("name")>"Display name"</label>
                <input id=id("name") name="form[display_name]" type="text" maxlength="200"
                    value=u.display_name.clone().unwrap_or_default() autocomplete="off"
                    aria-invalid=field_invalid(problem, "displayName") aria-describedby=id("name-error") />
                <FieldMessage problem field="displayName" id=id("name-error") />
            </div>
            <div class="field">
                <label for=id("role")>"Role"</label>
                <select id=id("role") name="form[role]" aria-invalid=field_invalid(problem, "roleId")>
                    {Role::ALL
                        .into_iter()
                        .map(|r| view! { <option value=r.as_str() selected={r == u.role}>{role_name(r)}</option> })
                        .collect_view()}
                </select>
                <FieldMessage problem field="roleId" id=id("role-error") />
            </div>
        </div>
        <div class="field-row">
            <div class="field">
                <label for=id("tags")>"Tags"</label>
                <input id=id("tags") name="form[tags]" type="text" value=u.tags.join(", ") autocomplete="off"
                    placeholder="billing, de" aria-describedby=format!("{} {}", id("tags-hint"), id("tags-error"))
                    aria-invalid=field_invalid(problem, "tags") />
                <p class="hint" id=id("tags-hint")>"Skills and labels, separated by commas. Routing rules match them."</p>
                <FieldMessage problem field="tags" id=id("tags-error") />
            </div>
            <div class="field">
                <label for=id("external")>"External id"</label>
                <input id=id("external") name="form[external_id]" type="text" maxlength="200"
                    value=u.external_id.clone().unwrap_or_default() autocomplete="off"
                    aria-invalid=field_invalid(problem, "externalId") aria-describedby=id("external-error") />
                <FieldMessage problem field="externalId" id=id("external-error") />
            </div>
            <div class="field">
                <label for=id("capacity")>"Capacity"</label>
                <input id=id("capacity") name="form[max_concurrent_chats]" type="number" min="1" max="100" step="1"
                    value=u.max_concurrent_chats.map(|n| n.to_string()).unwrap_or_default()
                    placeholder="Workspace default" aria-invalid=field_invalid(problem, "maxConcurrentChats")
                    aria-describedby=format!("{} {}", id("capacity-hint"), id("capacity-error")) />
                <p class="hint" id=id("capacity-hint")>
                    "Open conversations routing gives this user at once (1–100). Empty: the workspace default (Settings › Workspace)."
                </p>
                <FieldMessage problem field="maxConcurrentChats" id=id("capacity-error") />
            </div>
        </div>
        <div class="field">
            <label for=id("description")>"Description"</label>
            <textarea id=id("description") name="form[description]" maxlength="2000" rows="2"
                aria-invalid=field_invalid(problem, "description") aria-describedby=id("description-error")>
                {u.description.clone().unwrap_or_default()}
            </textarea>
            <FieldMessage problem field="description" id=id("description-error") />
        </div>
        <label class="checkbox">
            <input type="checkbox" name="form[mco_enabled]" value="on" checked=u.mco_enabled aria-describedby=id("mco-hint") />
            "MCO integration enabled"
        </label>
        <p class="hint" id=id("mco-hint")>"Kept for an external MCO integration, which reads it over the API. Rapport itself does nothing with it."</p>
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Admin => "Admin",
        Role::Supervisor => "Supervisor",
        Role::Agent => "Agent",
    }
}

#[component]
fn UserTable(list: UserList, search: String) -> impl IntoView {
    let info = list.page.clone();
    let link = move |page: i64| {
        let mut href = format!("{USERS_PATH}?page={page}");
        if !search.is_empty() {
            href.push_str("&q=");
            href.push_str(&encode_query(&search));
        }
        href
    };
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Users"</caption>
                <thead>
                    <tr>
                        <th scope="col">"E-mail"</th>
                        <th scope="col">"Name"</th>
                        <th scope="col">"Role"</th>
                        <th scope="col">"Tags"</th>
                        <th scope="col">"Sign-in"</th>
                    </tr>
                </thead>
                <tbody>
                    {list
                        .users
                        .into_iter()
                        .map(|u| view! {
                            <tr>
                                <td><a href=format!("{USERS_PATH}/{}", u.id)>{u.email.clone()}</a></td>
                                <td>{u.display_name.clone().unwrap_or_default()}</td>
                                <td>{role_name(u.role)}</td>
                                <td>{u.tags.iter().map(|t| view! { <span class="tag">{t.clone()}</span>" " }).collect_view()}</td>
                                <td>
                                    {if u.has_password {
                                        view! { <span class="badge ok">"Password set"</span> }.erase()
                                    } else {
                                        view! { <span class="badge muted">"No password"</span> }.erase()
                                    }}
                                </td>
                            </tr>
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
        <Pager info noun="users" words=("Previous", "Next") href=link label="Pages of users" />
    }
}

/// `/settings/users/{id}`.
#[component]
pub fn UserPage() -> impl IntoView {
    view! {
        <Title text="User" />
        <UserDetail />
    }
}

#[component]
fn UserDetail() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditUser>::new();
    let reset = FormAction::<ResetUserPassword>::new();
    let remove = FormAction::<RemoveUser>::new();
    let edit_saved = successes(edit.value());
    let reset_saved = successes(reset.value());
    let user = Resource::new(
        move || (id(), edit_saved.get(), reset_saved.get()),
        |(id, ..)| get_user(id),
    );
    let flashed = Resource::new(|| (), |_| take_user_password());
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: USERS_PATH,
        crumb: "Settings › Users".into(),
        text: "Back to the users".into(),
    };
    let render = move |u: UserView| {
        let title = u.display_name.clone().unwrap_or_else(|| u.email.clone());
        // Each form's children are a closure of their own.
        let (edit_id, reset_id, remove_id) = (u.id.clone(), u.id.clone(), u.id.clone());
        view! {
            <h1>{title}</h1>
            <EditCard title="Profile" action=edit id=edit_id.clone()>
                <UserFields user=Some(u.clone()) problem />
            </EditCard>
            <section class="card">
                <h2>"Password"</h2>
                <p>"A new password is generated and shown once. The user's open sessions end."</p>
                <PostForm action=reset>
                    <input type="hidden" name="id" value=reset_id.clone() />
                    <button type="submit" class="button secondary">"Reset password"</button>
                </PostForm>
                <ActionError value=reset.value() />
                {move || reset.value().get().and_then(Result::ok).map(|shown| view! { <PasswordNote shown /> })}
            </section>
            <DeleteCard title="Delete the user" summary="Delete this user…"
                consequence="Their sessions end, they leave their teams, and their customers become unassigned. This cannot be undone."
                action=remove id=remove_id.clone() />
        }
    };
    // Its resources are created above, outside the guard's `Suspense` (see `Guard`).
    view! {
        <DetailFrame title="User" allowed=admins back loading="Loading the user…" load=move || user render>
            <Suspense>
                {move || Suspend::new(async move {
                    flashed.await.ok().flatten().map(|shown| view! { <section class="card"><PasswordNote shown /></section> })
                })}
            </Suspense>
        </DetailFrame>
    }
}
