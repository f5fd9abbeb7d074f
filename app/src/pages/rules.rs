//! Settings → Routing rules and SLA rules (admins). `/settings/routing-rules`
//! and `/settings/sla-rules` list the rules with their matches over the last
//! month; `…/new` and `…/{id}` open the rule builder (see
//! [`crate::components::rule_builder`]), which saves, and deletes a saved rule.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::rules::{
        get_rule, list_rules, rule_references, RemoveRule, RuleChoices, RuleDraft, RuleKind, RuleSummary, SaveRule,
        SavedRule,
    },
    components::{
        detail::{BackTo, DetailFrame},
        feedback::{action_problem, successes, ActionError, ErrorNote, SavedNote},
        layout::{admins, Guard},
        lists::DangerZone,
        rule_builder::RuleBuilder,
    },
};

fn words(kind: RuleKind) -> (&'static str, &'static str, &'static str) {
    match kind {
        RuleKind::Routing => (
            "Routing rules",
            "routing rule",
            "Who gets a new conversation: conditions on the customer, the page and the time, actions that queue or answer, and else-rules tried when a rule does not match.",
        ),
        RuleKind::Sla => (
            "SLA rules",
            "SLA rule",
            "Response times conversations must meet, for the customers the conditions pick, and who hears of a miss.",
        ),
    }
}

/// `/settings/routing-rules`.
#[component]
pub fn RoutingRulesPage() -> impl IntoView {
    view! { <RulesList kind=RuleKind::Routing /> }
}

/// `/settings/sla-rules`.
#[component]
pub fn SlaRulesPage() -> impl IntoView {
    view! { <RulesList kind=RuleKind::Sla /> }
}

#[component]
fn RulesList(kind: RuleKind) -> impl IntoView {
    let rules = Resource::new(|| (), move |_| list_rules(kind));
    let (title, noun, lead) = words(kind);
    view! {
        <Title text=title />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>{title}</h1>
            <p class="lead">{lead}</p>
            <p><a class="button primary" href=format!("{}/new", kind.path())>{format!("New {noun}")}</a></p>
            <section class="card">
                <h2>{title}</h2>
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading rules…"</p> }>
                    {move || Suspend::new(async move {
                        match rules.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">{format!("No {noun} yet. Start one with “New {noun}”.")}</p>
                            }.erase(),
                            Ok(list) => view! { <RuleTable kind list /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

#[component]
fn RuleTable(kind: RuleKind, list: Vec<RuleSummary>) -> impl IntoView {
    let about = if kind == RuleKind::Routing {
        "Channels"
    } else {
        "Response times"
    };
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">{words(kind).0}</caption>
                <thead>
                    <tr>
                        <th scope="col">"Name"</th>
                        <th scope="col">{about}</th>
                        <th scope="col">"Applied"</th>
                        <th scope="col" class="number">"Matches, last month"</th>
                    </tr>
                </thead>
                <tbody>
                    {list.into_iter().map(|r| view! {
                        <tr>
                            <td><a href=format!("{}/{}", kind.path(), r.id)>{r.name.clone()}</a></td>
                            <td>{r.about.clone()}</td>
                            <td>{if r.active { "Yes" } else { "No" }}</td>
                            <td class="number">{r.matches.to_string()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// `/settings/routing-rules/{id}` (`new` for a new one).
#[component]
pub fn RoutingRulePage() -> impl IntoView {
    view! { <RuleEditor kind=RuleKind::Routing /> }
}

/// `/settings/sla-rules/{id}` (`new` for a new one).
#[component]
pub fn SlaRulePage() -> impl IntoView {
    view! { <RuleEditor kind=RuleKind::Sla /> }
}

#[component]
fn RuleEditor(kind: RuleKind) -> impl IntoView {
    let params = use_params_map();
    let id = move || params.with(|p| p.get("id").unwrap_or_default());
    let save = FormAction::<SaveRule>::new();
    let remove = FormAction::<RemoveRule>::new();
    // Re-read after a successful save only: a refused save keeps what was typed.
    let saved = successes(save.value());
    let rule = Resource::new(
        move || (id(), saved.get()),
        move |(id, _)| async move {
            if id == "new" {
                Ok(None)
            } else {
                get_rule(kind, id).await.map(Some)
            }
        },
    );
    let refs = Resource::new(|| (), |_| rule_references());
    let problem = action_problem(save.value());
    let (title, noun, _) = words(kind);
    let back = BackTo {
        path: kind.path(),
        crumb: format!("Settings › {title}"),
        text: format!("Back to the {}", title.to_lowercase()),
    };
    let render = move |(saved, refs): (Option<SavedRule>, RuleChoices)| {
        let (heading, id, draft, matches) = match saved {
            Some(SavedRule { id, draft, matches }) => (draft.name.clone(), Some(id), draft, Some(matches)),
            None => (format!("New {noun}"), None, RuleDraft::default(), None),
        };
        let (form_id, remove_id) = (id.clone().unwrap_or_default(), id.clone());
        view! {
            <h1>{heading}</h1>
            {matches.map(|m| view! {
                <p class="lead">{format!("Matched {m} time{} over the last month.", if m == 1 { "" } else { "s" })}</p>
            })}
            <section class="card">
                <PostForm action=save attr:data-unsaved-guard="">
                    <input type="hidden" name="kind" value=format!("{kind:?}") />
                    <input type="hidden" name="id" value=form_id />
                    <RuleBuilder kind draft refs problem self_id=id />
                    <button type="submit" class="button primary" disabled=move || save.pending().get()>
                        {format!("Save {noun}")}
                    </button>
                </PostForm>
                <ActionError value=save.value() />
                <SavedNote value=save.value() />
            </section>
            {remove_id.map(|rid| view! {
                <DangerZone title="Delete the rule" summary="Delete this rule…"
                    consequence="Refused while another routing rule continues with it. This cannot be undone.">
                    <PostForm action=remove>
                        <input type="hidden" name="kind" value=format!("{kind:?}") />
                        <input type="hidden" name="id" value=rid />
                        <button type="submit" class="button danger">"Delete permanently"</button>
                    </PostForm>
                </DangerZone>
                <ActionError value=remove.value() />
            })}
        }
    };
    let load = move || async move { Ok((rule.await?, refs.await?)) };
    view! {
        <Title text=noun />
        <DetailFrame title=noun allowed=admins back loading="Loading the rule…" load render />
    }
}
