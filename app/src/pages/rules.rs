//! Settings → Routing, SLA and action rules (admins). `/settings/routing-rules`,
//! `/settings/sla-rules` and `/settings/action-rules` list the rules with their
//! matches over the last month (action rules with export and import); routing rules in the order they are tried, numbered, each with "Move
//! up" / "Move down". `…/new` and `…/{id}` open the rule builder (see
//! [`crate::components::rule_builder`]), which saves, and deletes a saved rule;
//! a routing rule's page lists its recent matches from the match log.

use crate::components::route::use_path_param;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        action_rules::{export_action_rules, ImportActionRules},
        routing_log::RoutingLine,
        rules::{
            get_rule, list_rules, rule_matches, rule_references, MoveRule, RemoveRule, RuleChoices, RuleDraft,
            RuleKind, RuleSummary, SaveRule, SavedRule,
        },
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
            "Who gets a new conversation: conditions on the customer, the page and the time, actions that queue or answer, and else-rules tried when a rule does not match. Rules are tried in the order below; the first that matches acts.",
        ),
        RuleKind::Sla => (
            "SLA rules",
            "SLA rule",
            "Response times conversations must meet, for the customers the conditions pick, and who hears of a miss.",
        ),
        RuleKind::Action => (
            "Action rules",
            "action rule",
            "When visitors see the chat, and when it opens by itself: conditions on the page, the visitor, the time and your agents, checked in the visitor's browser. Rules run in the order of their names.",
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

/// `/settings/action-rules`.
#[component]
pub fn ActionRulesPage() -> impl IntoView {
    view! { <RulesList kind=RuleKind::Action /> }
}

#[component]
fn RulesList(kind: RuleKind) -> impl IntoView {
    let moved = FormAction::<MoveRule>::new();
    let imported = FormAction::<ImportActionRules>::new();
    let rules = Resource::new(
        move || (moved.version().get(), imported.version().get()),
        move |_| list_rules(kind),
    );
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
                // A transition: after a move the old order stays until the new one is read.
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading rules…"</p> }>
                    {move || Suspend::new(async move {
                        match rules.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">{format!("No {noun} yet. Start one with “New {noun}”.")}</p>
                            }.erase(),
                            Ok(list) => view! { <RuleTable kind list moved /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
                <ActionError value=moved.value() />
            </section>
            {(kind == RuleKind::Action).then(|| view! { <ExportImport imported /> })}
        </Guard>
    }
}

#[component]
fn RuleTable(kind: RuleKind, list: Vec<RuleSummary>, moved: FormAction<MoveRule>) -> impl IntoView {
    let routing = kind == RuleKind::Routing;
    let about = match kind {
        RuleKind::Routing => "Channels",
        RuleKind::Sla => "Response times",
        RuleKind::Action => "When → then",
    };
    let last = list.len().saturating_sub(1);
    // After a move the table is drawn anew: keep the keyboard on the rule moved.
    #[cfg(feature = "hydrate")]
    Effect::new(move |_| {
        if let Some(Ok(target)) = moved.value().get_untracked() {
            focus_move_button(&target);
        }
    });
    view! {
        <div class="table-wrap">
            <table class="rule-table">
                <caption class="visually-hidden">
                    {words(kind).0} {routing.then_some(", in the order they are tried")}
                </caption>
                <thead>
                    <tr>
                        {routing.then(|| view! { <th scope="col">"Order"</th> })}
                        <th scope="col">"Name"</th>
                        <th scope="col">{about}</th>
                        <th scope="col">"Applied"</th>
                        <th scope="col" class="number">"Matches, last month"</th>
                    </tr>
                </thead>
                <tbody>
                    {list.into_iter().enumerate().map(|(i, r)| view! {
                        <tr>
                            {routing.then(|| view! {
                                <td>
                                    <div class="rule-order">
                                        <span class="position" title=r.priority.map(|p| format!("Priority {p}"))>
                                            {(i + 1).to_string()}
                                        </span>
                                        <MoveButtons id=r.id.clone() name=r.name.clone() first=i == 0 last=i == last moved />
                                    </div>
                                </td>
                            })}
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

/// "Move up" and "Move down" of one rule: one form, the button pressed says
/// which way. The first rule has no "Move up", the last no "Move down".
#[component]
fn MoveButtons(id: String, name: String, first: bool, last: bool, moved: FormAction<MoveRule>) -> impl IntoView {
    let rule_id = id.clone();
    let button = move |direction: &'static str, label: &'static str| {
        view! {
            <button type="submit" id=format!("move-{id}-{direction}") class="button small secondary"
                name="direction" value=direction disabled=move || moved.pending().get()>
                {label} <span class="visually-hidden">{format!(": {name}")}</span>
            </button>
        }
    };
    let up = (!first).then(|| button("up", "Move up"));
    let down = (!last).then(|| button("down", "Move down"));
    view! {
        <PostForm action=moved attr:class="move-rule">
            <input type="hidden" name="id" value=rule_id />
            {up}
            {down}
        </PostForm>
    }
}

/// Focuses the button `move_rule` names, or the rule's other one when the rule
/// reached the end that has no such button.
#[cfg(feature = "hydrate")]
fn focus_move_button(target: &str) {
    use wasm_bindgen::JsCast;
    let other = match target.strip_suffix("-up") {
        Some(stem) => format!("{stem}-down"),
        None => format!("{}-up", target.trim_end_matches("-down")),
    };
    let document = document();
    let found = [target, other.as_str()]
        .into_iter()
        .find_map(|id| document.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(button) = found {
        // Focusing cannot fail on a button in the page; were it to, the
        // keyboard would only start from the top again.
        let _ = button.focus();
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

/// `/settings/action-rules/{id}` (`new` for a new one).
#[component]
pub fn ActionRulePage() -> impl IntoView {
    view! { <RuleEditor kind=RuleKind::Action /> }
}

/// Export (the document, to copy or download) and import (all or none) of
/// action rules.
#[component]
fn ExportImport(imported: FormAction<ImportActionRules>) -> impl IntoView {
    let exported = Resource::new(move || imported.version().get(), |_| export_action_rules());
    let done = move || {
        imported.value().get().and_then(|r| r.ok()).map(|n| {
            view! { <p class="notice success" role="status">{format!("Imported {n} rule{}.", if n == 1 { "" } else { "s" })}</p> }
        })
    };
    view! {
        <section class="card" aria-labelledby="export-import">
            <h2 id="export-import">"Export and import"</h2>
            <p class="hint">"Move rules between workspaces as JSON: import the export of another workspace here. A rule with the id of one of these replaces it; any other is added. One bad rule refuses the whole import."</p>
            <Transition fallback=|| view! { <p class="loading">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match exported.await {
                        Ok(json) => {
                            let href = format!("data:application/json;charset=utf-8,{}", js_uri_encode(&json));
                            view! {
                                <details>
                                    <summary>"Export"</summary>
                                    <label for="action-rules-export">"The workspace's action rules"</label>
                                    <textarea id="action-rules-export" class="code" rows="8" readonly>{json}</textarea>
                                    <p><a class="button secondary" href=href download="action-rules.json">"Download action-rules.json"</a></p>
                                </details>
                            }.erase()
                        }
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Transition>
            <PostForm action=imported>
                <div class="field">
                    <label for="action-rules-import">"Rules to import (an export's JSON)"</label>
                    <textarea id="action-rules-import" name="rules" class="code" rows="6" required></textarea>
                </div>
                <button type="submit" class="button primary" disabled=move || imported.pending().get()>"Import"</button>
            </PostForm>
            <ActionError value=imported.value() />
            {done}
        </section>
    }
}

/// `text` as a URI component, for a `data:` link.
fn js_uri_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[component]
fn RuleEditor(kind: RuleKind) -> impl IntoView {
    let id = use_path_param("id");
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
    // A routing rule's recent matches (the match log); SLA rules have none.
    let recent = Resource::new(id, move |id| async move {
        if kind == RuleKind::Routing && id != "new" {
            rule_matches(id).await.map(Some)
        } else {
            Ok(None)
        }
    });
    let problem = action_problem(save.value());
    let (title, noun, _) = words(kind);
    let back = BackTo {
        path: kind.path(),
        crumb: format!("Settings › {title}"),
        text: format!("Back to the {}", title.to_lowercase()),
    };
    let render = move |(saved, refs, recent): (Option<SavedRule>, RuleChoices, Option<Vec<RoutingLine>>)| {
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
            {recent.map(|lines| view! { <RecentMatches lines /> })}
            {remove_id.map(|rid| view! {
                <DangerZone title="Delete the rule" summary="Delete this rule…"
                    consequence=if kind == RuleKind::Routing {
                        "Refused while another routing rule continues with it. This cannot be undone."
                    } else {
                        "This cannot be undone."
                    }>
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
    let load = move || async move { Ok((rule.await?, refs.await?, recent.await?)) };
    view! {
        <Title text=noun />
        <DetailFrame title=noun allowed=admins back loading="Loading the rule…" load render />
    }
}

/// The decisions in which a routing rule (or one of its else-rules) matched,
/// newest first.
#[component]
fn RecentMatches(lines: Vec<RoutingLine>) -> impl IntoView {
    let body = if lines.is_empty() {
        view! { <p class="empty">"No conversation has matched this rule yet."</p> }.erase()
    } else {
        view! {
            <div class="table-wrap">
                <table class="routing-log">
                    <caption class="visually-hidden">"Recent matches, newest first"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Time"</th>
                            <th scope="col">"Conversation"</th>
                            <th scope="col">"Reason"</th>
                            <th scope="col">"Result"</th>
                            <th scope="col">"Agent"</th>
                            <th scope="col">"Actions"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {lines.into_iter().map(|l| view! {
                            <tr>
                                <td class="nowrap">{l.at.clone()}</td>
                                <td>
                                    <a href=format!("/inbox/{}", l.customer_id)>
                                        {l.customer.clone().unwrap_or_else(|| l.customer_id.clone())}
                                    </a>
                                    {l.rules.clone().filter(|r| r.contains('›')).map(|r| view! {
                                        <span class="muted small">{format!(" via {r}")}</span>
                                    })}
                                </td>
                                <td>{l.reason.clone()}</td>
                                <td>{l.result.clone()}</td>
                                <td>{l.agent.clone().unwrap_or_else(|| "—".into())}</td>
                                <td>
                                    <ul class="plain-list actions-taken">
                                        {l.actions.into_iter().map(|a| view! { <li>{a}</li> }).collect_view()}
                                    </ul>
                                </td>
                            </tr>
                        }).collect_view()}
                    </tbody>
                </table>
            </div>
        }
        .erase()
    };
    view! {
        <section class="card" aria-labelledby="recent-matches">
            <h2 id="recent-matches">"Recent matches"</h2>
            <p class="hint">"The latest conversations this rule routed, newest first; times in the workspace's time zone."</p>
            {body}
        </section>
    }
}
