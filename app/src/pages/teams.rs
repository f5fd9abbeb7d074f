//! Settings → Teams (admins): `/settings/teams` searches, pages and adds teams;
//! `/settings/teams/{id}` edits one (name, tags, members) or deletes it. Members
//! are picked from the tenant's users with checkboxes, so the picker works
//! without JavaScript; a filter box narrows a long list once the page is live.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::{
        problem::Problem,
        teams::{
            get_team, list_teams, team_candidates, AddTeam, EditTeam, Member, RemoveTeam, TeamList, TeamView,
            TEAMS_PATH,
        },
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, reset_on_success, successes, ActionError, ErrorNote, FieldMessage},
        layout::{admins, encode_query, Guard},
        lists::Pager,
    },
};

type Candidates = Resource<Result<Vec<Member>, ServerFnError>>;

/// `/settings/teams`.
#[component]
pub fn TeamsPage() -> impl IntoView {
    let add = FormAction::<AddTeam>::new();
    let query = use_query_map();
    let search = move || query.with(|q| q.get("q")).unwrap_or_default();
    let page = move || {
        query
            .with(|q| q.get("page"))
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let teams = Resource::new(
        move || (search(), page(), add.version().get()),
        |(search, page, _)| list_teams(Some(search), Some(page)),
    );
    let candidates: Candidates = Resource::new(|| (), |_| team_candidates());
    let form = NodeRef::new();
    reset_on_success(add.value(), form);
    view! {
        <Title text="Teams" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Teams"</h1>
            <p class="lead">"Teams group agents: routing rules send conversations to them, and agents assign conversations to them."</p>
            <section class="card">
                <h2>"Add a team"</h2>
                <PostForm action=add node_ref=form attr:data-unsaved-guard="">
                    <TeamFields team=None problem=action_problem(add.value()) candidates />
                    <button type="submit" class="button primary" disabled=move || add.pending().get()>"Add team"</button>
                </PostForm>
                <ActionError value=add.value() />
                {move || add.value().get().and_then(Result::ok).map(|t| view! {
                    <p class="note ok" role="status">
                        "Team " <a href=format!("{TEAMS_PATH}/{}", t.id)>{t.name.clone()}</a> " added."
                    </p>
                })}
            </section>
            <section class="card">
                <h2>"Teams"</h2>
                <form method="get" action=TEAMS_PATH class="field-row" role="search">
                    <div class="field">
                        <label for="team-search">"Search by name"</label>
                        <input id="team-search" name="q" type="search" value=search autocomplete="off" />
                    </div>
                    <button type="submit" class="button secondary">"Search"</button>
                </form>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading teams…"</p> }>
                    {move || Suspend::new(async move {
                        let people = candidates.await.unwrap_or_default();
                        match teams.await {
                            Ok(list) if list.teams.is_empty() => view! {
                                <p class="empty">"No team yet, or none matches. Add one above."</p>
                            }.erase(),
                            Ok(list) => view! { <TeamTable list search=search() people /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
        </Guard>
    }
}

/// Name, tags and the member picker, shared by the add and edit forms.
#[component]
fn TeamFields(team: Option<TeamView>, problem: Signal<Option<Problem>>, candidates: Candidates) -> impl IntoView {
    let prefix = if team.is_some() { "edit" } else { "new" };
    let id = move |name: &str| format!("{prefix}-team-{name}");
    let (name, tags, members) = team.map(|t| (t.name, t.tags.join(", "), t.members)).unwrap_or_default();
    let members = StoredValue::new(members);
    let filter = RwSignal::new(String::new());
    view! {
        <div class="field-row">
            <div class="field">
                <label for=id("name")>"Name"</label>
                <input id=id("name") name="name" type="text" required=true maxlength="200" value=name autocomplete="off"
                    aria-invalid=field_invalid(problem, "name") aria-describedby=id("name-error") />
                <FieldMessage problem field="name" id=id("name-error") />
            </div>
            <div class="field">
                <label for=id("tags")>"Tags"</label>
                <input id=id("tags") name="tags" type="text" value=tags autocomplete="off" placeholder="billing, de"
                    aria-invalid=field_invalid(problem, "tags") aria-describedby=format!("{} {}", id("tags-hint"), id("tags-error")) />
                <p class="hint" id=id("tags-hint")>"Skills of the whole team: a routing rule's queue for a tag reaches its members too."</p>
                <FieldMessage problem field="tags" id=id("tags-error") />
            </div>
        </div>
        <fieldset class="member-picker">
            <legend>"Members"</legend>
            <label for=id("filter") class="visually-hidden">"Filter people"</label>
            <input id=id("filter") type="search" placeholder="Filter by name or e-mail" autocomplete="off"
                on:input=move |ev| filter.set(event_target_value(&ev).to_lowercase()) />
            <Suspense fallback=|| view! { <p class="loading">"Loading people…"</p> }>
                {move || Suspend::new(async move {
                    match candidates.await {
                        Ok(people) if people.is_empty() => view! { <p class="empty">"No users yet."</p> }.erase(),
                        Ok(people) => view! {
                            <ul class="choices">
                                {people.into_iter().map(|(uid, name, email)| {
                                    let checked = members.with_value(|m| m.contains(&uid));
                                    let haystack = format!("{} {}", name.to_lowercase(), email.to_lowercase());
                                    let box_id = format!("{prefix}-member-{uid}");
                                    view! {
                                        <li hidden=move || { let f = filter.get(); !f.is_empty() && !haystack.contains(&f) }>
                                            <input type="checkbox" id=box_id.clone() name="members[]" value=uid checked=checked />
                                            <label for=box_id>
                                                {if name.is_empty() { email.clone() } else { format!("{name} · {email}") }}
                                            </label>
                                        </li>
                                    }
                                }).collect_view()}
                            </ul>
                        }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
            <FieldMessage problem field="members" id=id("members-error") />
        </fieldset>
    }
}

#[component]
fn TeamTable(list: TeamList, search: String, people: Vec<Member>) -> impl IntoView {
    let info = list.page.clone();
    let link = move |page: i64| {
        let mut href = format!("{TEAMS_PATH}?page={page}");
        if !search.is_empty() {
            href.push_str("&q=");
            href.push_str(&encode_query(&search));
        }
        href
    };
    let name_of = move |id: &str| {
        people
            .iter()
            .find(|(uid, ..)| uid == id)
            .map(|(_, name, email)| if name.is_empty() { email.clone() } else { name.clone() })
            .unwrap_or_else(|| id.to_string())
    };
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Teams"</caption>
                <thead>
                    <tr><th scope="col">"Name"</th><th scope="col">"Members"</th><th scope="col">"Tags"</th></tr>
                </thead>
                <tbody>
                    {list.teams.into_iter().map(|t| {
                        let names: Vec<String> = t.members.iter().map(|m| name_of(m)).collect();
                        view! {
                            <tr>
                                <td><a href=format!("{TEAMS_PATH}/{}", t.id)>{t.name.clone()}</a></td>
                                <td>{if names.is_empty() { "—".to_string() } else { names.join(", ") }}</td>
                                <td>{t.tags.iter().map(|tag| view! { <span class="tag">{tag.clone()}</span>" " }).collect_view()}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
        <Pager info noun="teams" words=("Previous", "Next") href=link label="Pages of teams" />
    }
}

/// `/settings/teams/{id}`.
#[component]
pub fn TeamPage() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditTeam>::new();
    let remove = FormAction::<RemoveTeam>::new();
    let edit_saved = successes(edit.value());
    let team = Resource::new(move || (id(), edit_saved.get()), |(id, _)| get_team(id));
    let candidates: Candidates = Resource::new(|| (), |_| team_candidates());
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: TEAMS_PATH,
        crumb: "Settings › Teams".into(),
        text: "Back to the teams".into(),
    };
    let render = move |t: TeamView| {
        let (edit_id, remove_id) = (t.id.clone(), t.id.clone());
        view! {
            <h1>{t.name.clone()}</h1>
            <EditCard title="Team" action=edit id=edit_id>
                <TeamFields team=Some(t.clone()) problem candidates />
            </EditCard>
            <DeleteCard title="Delete the team" summary="Delete this team…"
                consequence="Conversations assigned to it become unassigned. This cannot be undone."
                action=remove id=remove_id />
        }
    };
    view! {
        <Title text="Team" />
        <DetailFrame title="Team" allowed=admins back loading="Loading the team…" load=move || team render />
    }
}
