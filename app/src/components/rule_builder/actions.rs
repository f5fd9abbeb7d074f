//! A routing rule's actions in the builder: the list, and one action row by
//! its type.

use leptos::prelude::*;

use super::{error_line, field_prefix, id_prefix, number_input, options, Builder, Part};
use crate::api::rules::{ActionDraft, RuleDraft, ACTION_TYPES};
use crate::erase::EraseView;

pub(super) fn actions(b: Builder, path: &[usize], rule: &RuleDraft) -> impl IntoView {
    let prefix = field_prefix(path);
    let p = path.to_vec();
    view! {
        <fieldset>
            <legend>"Then"</legend>
            <ol class="rule-parts">
                {rule.actions.iter().cloned().enumerate().map(|(i, a)| action_view(b, path, i, a)).collect_view()}
            </ol>
            <button type="button" class="button secondary"
                on:click=move |_| b.reshape(&p, |r| r.actions.push(ActionDraft::default()))>"Add an action"</button>
            {error_line(b.exact(format!("{prefix}actions")))}
        </fieldset>
    }
}

fn action_view(b: Builder, path: &[usize], i: usize, a: ActionDraft) -> impl IntoView {
    let prefix = field_prefix(path);
    let id = {
        let ids = id_prefix(path);
        move |part: &str| format!("{ids}-action-{i}-{part}")
    };
    let p = path.to_vec();
    let set = move |reshape: bool, change: Box<dyn FnOnce(&mut ActionDraft)>| {
        let apply = move |r: &mut RuleDraft| {
            if let Some(a) = r.actions.get_mut(i) {
                change(a)
            }
        };
        if reshape {
            b.reshape(&p, apply)
        } else {
            b.edit(&p, apply)
        }
    };
    let p = path.to_vec();
    let remove = move |_| {
        b.reshape(&p, |r| {
            if i < r.actions.len() {
                r.actions.remove(i);
            }
        })
    };
    let on_kind = {
        let set = set.clone();
        move |ev| {
            let v = event_target_value(&ev);
            set(true, Box::new(move |a| a.kind = v))
        }
    };
    let refs = b.refs.get_value();
    let fields = match a.kind.as_str() {
        "SYSTEM_MESSAGE" | "ROUTING_TO" | "SEND_FLOW" => {
            let (label, list) = match a.kind.as_str() {
                "SYSTEM_MESSAGE" => ("System message", refs.system_messages),
                "SEND_FLOW" => ("Flow", refs.flows),
                _ => {
                    let own = b.self_id.get_value().unwrap_or_default();
                    (
                        "Routing rule",
                        refs.routing_rules.into_iter().filter(|(rid, _)| *rid != own).collect(),
                    )
                }
            };
            view! {
                <div class="field grow">
                    <label for=id("reference")>{label}</label>
                    <select id=id("reference") on:change=move |ev| { let v = event_target_value(&ev); set(false, Box::new(move |a| a.reference = v)) }>
                        {options(&list, &a.reference)}
                    </select>
                </div>
            }
            .erase()
        }
        _ => {
            let (s1, s2, s3, s4) = (set.clone(), set.clone(), set.clone(), set.clone());
            let target = match a.target_kind.as_str() {
                "USER" | "TEAM" => {
                    let list = if a.target_kind == "USER" { refs.users } else { refs.teams };
                    view! {
                        <select id=id("target") on:change=move |ev| { let v = event_target_value(&ev); s2(false, Box::new(move |a| a.target = v)) }>
                            {options(&list, &a.target)}
                        </select>
                    }
                    .erase()
                }
                _ => view! {
                    <input id=id("target") type="text" prop:value=a.target.clone() autocomplete="off" placeholder="support"
                        on:input=move |ev| { let v = event_target_value(&ev); s2(false, Box::new(move |a| a.target = v)) } />
                }
                .erase(),
            };
            view! {
                <div class="field">
                    <label for=id("target-kind")>"Queue for a"</label>
                    <select id=id("target-kind")
                        on:change=move |ev| { let v = event_target_value(&ev); s1(true, Box::new(move |a| { a.target_kind = v; a.target.clear() })) }>
                        {[("TEAM", "team"), ("USER", "user"), ("TAG", "tag (skill)")].map(|(v, label)| view! {
                            <option value=v selected=a.target_kind == v>{label}</option>
                        }).collect_view()}
                    </select>
                </div>
                <div class="field grow">
                    <label for=id("target")>"Who"</label>
                    {target}
                </div>
                <div class="field">
                    <label for=id("state")>"Agents who are"</label>
                    <select id=id("state") on:change=move |ev| { let v = event_target_value(&ev); s3(false, Box::new(move |a| a.agent_state = v)) }>
                        {[("ANY", "in any state"), ("ONLINE", "online"), ("AVAILABLE", "available")].map(|(v, label)| view! {
                            <option value=v selected=a.agent_state == v>{label}</option>
                        }).collect_view()}
                    </select>
                </div>
                <div class="field">
                    <label for=id("wait")>"Longest wait (seconds)"</label>
                    {number_input(id("wait"), a.max_wait_seconds, move |v| s4(false, Box::new(move |a| a.max_wait_seconds = v)))}
                </div>
            }
            .erase()
        }
    };
    let part = Part {
        list: "actions",
        noun: "Action",
        types: &ACTION_TYPES,
    };
    part.row(b, &prefix, i, id("type"), &a.kind, on_kind, fields, remove)
}
