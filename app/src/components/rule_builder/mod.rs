//! The rule builder: conditions, actions and nested else-rules of a routing
//! rule, the conditions, response times and receivers of an SLA rule, or an
//! action rule's trigger, conditions and action ([`visitor`]).
//!
//! The draft lives in a [`StoredValue`]; typing changes it without re-rendering,
//! so focus stays where it is. Adding, removing or switching the variant of a
//! part bumps `shape`, which re-renders the builder. Every change rewrites the
//! rule in the REST API's shape into the form's `rule` field, which is what is
//! submitted. Before the page is live (or without JavaScript) that field is a
//! visible text box and the builder is hidden.

use leptos::prelude::*;

use crate::api::{
    problem::Problem,
    rules::{RuleChoices, RuleDraft, RuleKind},
    watchdogs::RECEIVER_TYPES,
};
use crate::erase::EraseView;

mod actions;
mod conditions;
mod visitor;

use actions::actions;
use conditions::conditions;

/// Deepest nesting of else-rules (the service's limit).
const MAX_DEPTH: usize = 5;

#[derive(Clone, Copy)]
struct Builder {
    tree: StoredValue<RuleDraft>,
    shape: RwSignal<u32>,
    json: RwSignal<String>,
    kind: RuleKind,
    refs: StoredValue<RuleChoices>,
    problem: Signal<Option<Problem>>,
    self_id: StoredValue<Option<String>>,
}

impl Builder {
    /// Changes the rule at `path` and the submitted JSON.
    fn edit(self, path: &[usize], change: impl FnOnce(&mut RuleDraft)) {
        self.tree.update_value(|tree| {
            if let Some(rule) = tree.at_mut(path) {
                change(rule);
            }
        });
        self.json.set(self.tree.with_value(|t| api_json(t, self.kind)));
    }

    /// Changes the rule at `path` in a way that changes what is shown.
    fn reshape(self, path: &[usize], change: impl FnOnce(&mut RuleDraft)) {
        self.edit(path, change);
        self.shape.update(|n| *n += 1);
    }

    /// The message for a field path, its items included.
    fn message(self, field: String) -> impl Fn() -> Option<String> + Send + Sync + 'static {
        move || self.problem.get().and_then(|p| p.field(&field))
    }

    /// The message for exactly a field path.
    fn exact(self, field: String) -> impl Fn() -> Option<String> + Send + Sync + 'static {
        move || self.problem.get().and_then(|p| p.exact_field(&field))
    }
}

fn api_json(rule: &RuleDraft, kind: RuleKind) -> String {
    serde_json::to_string_pretty(&rule.to_api(kind)).unwrap_or_default()
}

/// `elseRules[0].elseRules[1].` for `[0, 1]`: the API path of a nested rule.
fn field_prefix(path: &[usize]) -> String {
    path.iter().map(|i| format!("elseRules[{i}].")).collect()
}

/// `r-0-1` for `[0, 1]`: unique element ids per rule.
fn id_prefix(path: &[usize]) -> String {
    std::iter::once("r".to_string())
        .chain(path.iter().map(|i| i.to_string()))
        .collect::<Vec<_>>()
        .join("-")
}

fn error_line(message: impl Fn() -> Option<String> + Send + Sync + 'static) -> impl IntoView {
    move || message().map(|m| view! { <p class="field-error" role="alert">{m}</p> })
}

fn options(list: &[(String, String)], selected: &str) -> impl IntoView {
    let selected = selected.to_string();
    view! {
        <option value="" selected=selected.is_empty()>"Choose…"</option>
        {list.iter().map(|(id, label)| view! {
            <option value=id.clone() selected=*id == selected>{label.clone()}</option>
        }).collect_view()}
    }
}

/// The builder and the `rule` field it fills.
#[component]
pub fn RuleBuilder(
    kind: RuleKind,
    draft: RuleDraft,
    refs: RuleChoices,
    problem: Signal<Option<Problem>>,
    /// The rule's own id, which `ROUTING_TO` may not pick.
    self_id: Option<String>,
) -> impl IntoView {
    let json = RwSignal::new(api_json(&draft, kind));
    let b = Builder {
        tree: StoredValue::new(draft),
        shape: RwSignal::new(0),
        json,
        kind,
        refs: StoredValue::new(refs),
        problem,
        self_id: StoredValue::new(self_id),
    };
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    // The rule as loaded is the field's default, which the unsaved-change guard
    // compares with. Leptos may reuse the element when a saved rule re-renders
    // the builder, keeping the old text as the default; so set it here.
    let field = NodeRef::<leptos::html::Textarea>::new();
    let loaded = json.get_untracked();
    Effect::new(move |_| {
        if let Some(field) = field.get() {
            // Setting a textarea's default cannot fail in practice; were it to,
            // the guard would only ask once too often.
            let _ = field.set_default_value(&loaded);
        }
    });
    view! {
        <div class="field" hidden=move || live.get()>
            <label for="rule-json">"The rule as JSON, in the REST API's shape"</label>
            <textarea id="rule-json" name="rule" rows="16" class="code" node_ref=field prop:value=move || json.get()
                aria-describedby="rule-json-error">{json.get_untracked()}</textarea>
            <p class="field-error" id="rule-json-error">{b.exact("rule".into())}</p>
        </div>
        <div class="rule-builder" hidden=move || !live.get()>
            {move || {
                b.shape.track();
                let rule = b.tree.get_value();
                rule_view(b, Vec::new(), rule)
            }}
        </div>
    }
}

fn rule_view(b: Builder, path: Vec<usize>, rule: RuleDraft) -> AnyView {
    let prefix = field_prefix(&path);
    let ids = id_prefix(&path);
    let id = {
        let ids = ids.clone();
        move |part: &str| format!("{ids}-{part}")
    };
    let legend = if path.is_empty() {
        "Rule".to_string()
    } else {
        format!(
            "Else-rule {}",
            path.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(".")
        )
    };
    let p = path.clone();
    let on_name = move |ev| {
        let v = event_target_value(&ev);
        b.edit(&p, |r| r.name = v)
    };
    let p = path.clone();
    let on_active = move |ev| {
        let v = event_target_checked(&ev);
        b.edit(&p, |r| r.active = v)
    };
    let routing = b.kind == RuleKind::Routing;
    view! {
        <fieldset class="rule" data-depth=path.len().to_string()>
            <legend>{legend}</legend>
            <div class="field-row">
                <div class="field">
                    <label for=id("name")>"Name"</label>
                    <input id=id("name") type="text" maxlength="200" prop:value=rule.name.clone() on:input=on_name
                        autocomplete="off" />
                    {error_line(b.message(format!("{prefix}name")))}
                </div>
                <div class="field checkbox">
                    <input id=id("active") type="checkbox" prop:checked=rule.active on:change=on_active />
                    <label for=id("active")>"Applied"</label>
                </div>
            </div>
            {(b.kind == RuleKind::Action).then(|| visitor::trigger_and_action(b, &rule))}
            {(routing && path.is_empty()).then(|| priority(b, &rule))}
            {routing.then(|| channels(b, &path, &rule))}
            {(b.kind == RuleKind::Sla && path.is_empty()).then(|| sla_fields(b, &rule))}
            {conditions(b, &path, &rule)}
            {routing.then(|| actions(b, &path, &rule))}
            {routing.then(|| else_rules(b, &path, &rule))}
        </fieldset>
    }
    .erase()
}

/// A top-level routing rule's place in the order rules are tried. Left empty,
/// a saved rule keeps its place and a new one goes last.
fn priority(b: Builder, rule: &RuleDraft) -> impl IntoView {
    let on_input = move |ev| {
        let v = event_target_value(&ev);
        // Anything but a whole number is left to the field's own validation;
        // the server names `priority` when it is out of range.
        b.edit(&[], |r| r.priority = v.trim().parse().ok())
    };
    view! {
        <div class="field">
            <label for="r-priority">"Priority"</label>
            <input id="r-priority" type="number" min="0" max="1000000" step="1" inputmode="numeric"
                prop:value=rule.priority.map(|p| p.to_string()).unwrap_or_default() on:input=on_input
                aria-describedby="r-priority-hint r-priority-error" />
            <p class="hint" id="r-priority-hint">
                "Rules are tried from the lowest priority up; equal ones by name. Leave it empty to keep the rule's place ("
                "a new rule goes last), or change the order with “Move up” and “Move down” in the "
                <a href=crate::api::rules::ROUTING_RULES_PATH>"list"</a> "."
            </p>
            <div id="r-priority-error">{error_line(b.exact("priority".into()))}</div>
        </div>
    }
}

fn channels(b: Builder, path: &[usize], rule: &RuleDraft) -> impl IntoView {
    let prefix = field_prefix(path);
    let ids = id_prefix(path);
    let boxes = [("CHAT", "Chat"), ("CALL", "Calls")].map(|(value, label)| {
        let p = path.to_vec();
        let box_id = format!("{ids}-type-{value}");
        let on_change = move |ev| {
            let on = event_target_checked(&ev);
            b.edit(&p, |r| {
                r.types.retain(|t| t != value);
                if on {
                    r.types.push(value.to_string());
                }
            })
        };
        view! {
            <span class="checkbox">
                <input id=box_id.clone() type="checkbox" prop:checked=rule.types.iter().any(|t| t == value) on:change=on_change />
                <label for=box_id>{label}</label>
            </span>
        }
    });
    view! {
        <fieldset class="inline-choices">
            <legend>"Applies to"</legend>
            {boxes.into_iter().collect_view()}
            {error_line(b.message(format!("{prefix}types")))}
        </fieldset>
    }
}

fn number_input(id: String, value: i64, on_value: impl Fn(i64) + Send + Sync + 'static) -> impl IntoView {
    view! {
        <input id=id type="number" min="1" step="1" prop:value=value.to_string()
            on:input=move |ev| on_value(event_target_value(&ev).trim().parse().unwrap_or(0)) />
    }
}

fn sla_fields(b: Builder, rule: &RuleDraft) -> impl IntoView {
    let receivers = rule.receivers.clone();
    view! {
        <fieldset>
            <legend>"Response times"</legend>
            <div class="field-row">
                <div class="field">
                    <label for="r-first">"First answer within (seconds)"</label>
                    {number_input("r-first".into(), rule.first_response_seconds, move |v| b.edit(&[], |r| r.first_response_seconds = v))}
                    {error_line(b.message("trigger.firstResponseSeconds".into()))}
                </div>
                <div class="field">
                    <label for="r-second">"Each later answer within (seconds)"</label>
                    {number_input("r-second".into(), rule.second_response_seconds, move |v| b.edit(&[], |r| r.second_response_seconds = v))}
                    {error_line(b.message("trigger.secondResponseSeconds".into()))}
                </div>
            </div>
            {error_line(b.exact("trigger".into()))}
        </fieldset>
        <fieldset>
            <legend>"Who hears of a miss"</legend>
            <div class="field checkbox">
                <input id="r-watchdog" type="checkbox" prop:checked=rule.watchdog_enabled
                    on:change=move |ev| { let v = event_target_checked(&ev); b.edit(&[], |r| r.watchdog_enabled = v) } />
                <label for="r-watchdog">"Alert the receivers when a response time is missed"</label>
            </div>
            <ol class="receiver-rows">
                {receivers.into_iter().enumerate().map(|(i, (kind, value))| {
                    let users = b.refs.with_value(|r| r.users.clone());
                    view! {
                        <li class="field-row">
                            <div class="field">
                                <label for=format!("r-receiver-{i}-type")>{format!("Receiver {} kind", i + 1)}</label>
                                <select id=format!("r-receiver-{i}-type")
                                    on:change=move |ev| { let v = event_target_value(&ev); b.reshape(&[], |r| if let Some(x) = r.receivers.get_mut(i) { x.0 = v; x.1.clear() }) }>
                                    {RECEIVER_TYPES.iter().map(|(v, label)| view! { <option value=*v selected=kind == *v>{*label}</option> }).collect_view()}
                                </select>
                            </div>
                            <div class="field grow">
                                <label for=format!("r-receiver-{i}")>{format!("Receiver {}", i + 1)}</label>
                                {if kind == "USER" {
                                    view! {
                                        <select id=format!("r-receiver-{i}")
                                            on:change=move |ev| { let v = event_target_value(&ev); b.edit(&[], |r| if let Some(x) = r.receivers.get_mut(i) { x.1 = v }) }>
                                            {options(&users, &value)}
                                        </select>
                                    }.erase()
                                } else {
                                    view! {
                                        <input id=format!("r-receiver-{i}") type="text" prop:value=value.clone() autocomplete="off"
                                            on:input=move |ev| { let v = event_target_value(&ev); b.edit(&[], |r| if let Some(x) = r.receivers.get_mut(i) { x.1 = v }) } />
                                    }.erase()
                                }}
                                {error_line(b.message(format!("receivers[{i}]")))}
                            </div>
                            <button type="button" class="button secondary small"
                                on:click=move |_| b.reshape(&[], |r| { if i < r.receivers.len() { r.receivers.remove(i); } })>
                                {format!("Remove receiver {}", i + 1)}
                            </button>
                        </li>
                    }
                }).collect_view()}
            </ol>
            <button type="button" class="button secondary"
                on:click=move |_| b.reshape(&[], |r| r.receivers.push(("EMAIL".into(), String::new())))>"Add a receiver"</button>
            {error_line(b.exact("receivers".into()))}
        </fieldset>
    }
}

/// Which list of a rule a row belongs to: conditions or actions.
struct Part {
    /// The list's field name, for the row's problems (`conditions[2]`).
    list: &'static str,
    /// What one row is called ("Condition 3").
    noun: &'static str,
    /// The types a row can take: value and label.
    types: &'static [(&'static str, &'static str)],
}

impl Part {
    /// One row: the picker of its type, the type's `fields`, a remove button
    /// and the row's problem.
    #[allow(clippy::too_many_arguments)]
    fn row(
        &self,
        b: Builder,
        prefix: &str,
        i: usize,
        type_id: String,
        kind: &str,
        on_kind: impl FnMut(leptos::ev::Event) + Send + 'static,
        fields: AnyView,
        remove: impl FnMut(leptos::ev::MouseEvent) + Send + 'static,
    ) -> impl IntoView {
        let noun = self.noun;
        view! {
            <li class="rule-part">
                <div class="field-row">
                    <div class="field">
                        <label for=type_id.clone()>{format!("{noun} {}", i + 1)}</label>
                        <select id=type_id on:change=on_kind>
                            {self.types.iter().map(|(v, label)| view! { <option value=*v selected=kind == *v>{*label}</option> }).collect_view()}
                        </select>
                    </div>
                    {fields}
                    <button type="button" class="button secondary small" on:click=remove>
                        {format!("Remove {} {}", noun.to_lowercase(), i + 1)}
                    </button>
                </div>
                {error_line(b.message(format!("{prefix}{}[{i}]", self.list)))}
            </li>
        }
    }
}

fn else_rules(b: Builder, path: &[usize], rule: &RuleDraft) -> impl IntoView {
    let p = path.to_vec();
    let nested: Vec<AnyView> = rule
        .else_rules
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, r)| {
            let mut child = path.to_vec();
            child.push(i);
            let parent = path.to_vec();
            let label = format!(
                "Remove else-rule {}",
                child.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(".")
            );
            view! {
                <li>
                    {rule_view(b, child, r)}
                    <button type="button" class="button secondary small"
                        on:click=move |_| b.reshape(&parent, |r| { if i < r.else_rules.len() { r.else_rules.remove(i); } })>{label}</button>
                </li>
            }
            .erase()
        })
        .collect();
    let can_nest = path.len() < MAX_DEPTH;
    view! {
        <div class="else-rules">
            <h3>"Otherwise"</h3>
            {nested.is_empty().then(|| view! { <p class="hint">"No else-rule: when this rule does not match, routing stops here."</p> })}
            <ol class="else-list">{nested}</ol>
            {can_nest.then(|| view! {
                <button type="button" class="button secondary"
                    on:click=move |_| b.reshape(&p, |r| r.else_rules.push(RuleDraft { name: format!("Otherwise {}", r.else_rules.len() + 1), ..Default::default() }))>
                    "Add an else-rule"
                </button>
            })}
        </div>
    }
}
