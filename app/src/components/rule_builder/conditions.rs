//! A routing or SLA rule's conditions in the builder: the list, and one
//! condition row by its type.

use leptos::prelude::*;

use super::{error_line, field_prefix, id_prefix, number_input, options, visitor, Builder, Part};
use crate::api::rules::{ConditionDraft, RuleDraft, RuleKind, CONDITION_TYPES};
use crate::erase::EraseView;

/// Draws one condition of a rule: routing and SLA rules share one, action rules have their own.
type ConditionRow = fn(Builder, &[usize], usize, ConditionDraft) -> AnyView;

pub(super) fn conditions(b: Builder, path: &[usize], rule: &RuleDraft) -> impl IntoView {
    let prefix = field_prefix(path);
    let p = path.to_vec();
    let (row, matches_all): (ConditionRow, _) = match b.kind {
        RuleKind::Action => (visitor::condition_view, "No condition: the rule matches on every page."),
        _ => (condition_view, "No condition: the rule matches every conversation."),
    };
    view! {
        <fieldset>
            <legend>"When all of these hold"</legend>
            {rule.conditions.is_empty().then(|| view! { <p class="hint">{matches_all}</p> })}
            <ol class="rule-parts">
                {rule.conditions.iter().cloned().enumerate().map(|(i, c)| row(b, path, i, c)).collect_view()}
            </ol>
            <button type="button" class="button secondary"
                on:click=move |_| b.reshape(&p, |r| r.conditions.push(ConditionDraft::default()))>"Add a condition"</button>
            {error_line(b.exact(format!("{prefix}conditions")))}
        </fieldset>
    }
}

fn condition_view(b: Builder, path: &[usize], i: usize, c: ConditionDraft) -> AnyView {
    let prefix = field_prefix(path);
    let id = {
        let ids = id_prefix(path);
        move |part: &str| format!("{ids}-condition-{i}-{part}")
    };
    let set = {
        let p = path.to_vec();
        move |change: Box<dyn FnOnce(&mut ConditionDraft)>| {
            b.edit(&p, move |r| {
                if let Some(c) = r.conditions.get_mut(i) {
                    change(c)
                }
            })
        }
    };
    let p = path.to_vec();
    let on_kind = move |ev| {
        let v = event_target_value(&ev);
        b.reshape(&p, |r| {
            if let Some(c) = r.conditions.get_mut(i) {
                c.kind = v
            }
        })
    };
    let p = path.to_vec();
    let remove = move |_| {
        b.reshape(&p, |r| {
            if i < r.conditions.len() {
                r.conditions.remove(i);
            }
        })
    };
    let fields = match c.kind.as_str() {
        "NO_ANSWER" => {
            let set = set.clone();
            view! {
                <div class="field">
                    <label for=id("seconds")>"Seconds without an answer"</label>
                    {number_input(id("seconds"), c.seconds, move |v| set(Box::new(move |c| c.seconds = v)))}
                </div>
            }
            .erase()
        }
        "OPENING_HOUR" => {
            let hours = b.refs.with_value(|r| r.opening_hours.clone());
            let (set_a, set_b) = (set.clone(), set.clone());
            view! {
                <div class="field">
                    <label for=id("hours")>"Opening hours"</label>
                    <select id=id("hours") on:change=move |ev| { let v = event_target_value(&ev); set_a(Box::new(move |c| c.opening_hours_id = v)) }>
                        {options(&hours, &c.opening_hours_id)}
                    </select>
                </div>
                <div class="field">
                    <label for=id("inside")>"When"</label>
                    <select id=id("inside") on:change=move |ev| { let v = event_target_value(&ev) == "inside"; set_b(Box::new(move |c| c.inside = v)) }>
                        <option value="inside" selected=c.inside>"inside these hours"</option>
                        <option value="outside" selected=!c.inside>"outside these hours"</option>
                    </select>
                </div>
            }
            .erase()
        }
        kind => {
            let (label, hint) = match kind {
                "HAS_ID" => ("Customer ids or external ids", "Separate them with commas."),
                "URL" => ("Page addresses", "* matches anything: https://shop.example.com/*"),
                _ => ("Tags", "Separate them with commas."),
            };
            let (set_a, set_b, set_c) = (set.clone(), set.clone(), set.clone());
            view! {
                <div class="field grow">
                    <label for=id("list")>{label}</label>
                    <input id=id("list") type="text" prop:value=c.list.clone() autocomplete="off" aria-describedby=id("hint")
                        on:input=move |ev| { let v = event_target_value(&ev); set_a(Box::new(move |c| c.list = v)) } />
                    <p class="hint" id=id("hint")>{hint}</p>
                </div>
                {(kind == "HAS_TAG").then(|| view! {
                    <div class="field">
                        <label for=id("match")>"Match"</label>
                        <select id=id("match") on:change=move |ev| { let v = event_target_value(&ev) == "ALL"; set_b(Box::new(move |c| c.all = v)) }>
                            <option value="ANY" selected=!c.all>"any of the tags"</option>
                            <option value="ALL" selected=c.all>"every tag"</option>
                        </select>
                    </div>
                    <div class="field">
                        <label for=id("source")>"Set by"</label>
                        <select id=id("source") aria-describedby=id("source-hint")
                            on:change=move |ev| { let v = event_target_value(&ev); set_c(Box::new(move |c| c.source = v)) }>
                            <option value="ANY" selected=c.source == "ANY">"anyone"</option>
                            <option value="TRUSTED" selected=c.source == "TRUSTED">"agents and integrations"</option>
                            <option value="PAGE" selected=c.source == "PAGE">"the visitor's page"</option>
                        </select>
                        <p class="hint" id=id("source-hint")>"Any page can set its own tags: route privileges (vip) on tags agents and integrations set."</p>
                    </div>
                })}
            }
            .erase()
        }
    };
    let part = Part {
        list: "conditions",
        noun: "Condition",
        types: &CONDITION_TYPES,
    };
    part.row(b, &prefix, i, id("type"), &c.kind, on_kind, fields, remove)
        .erase()
}
