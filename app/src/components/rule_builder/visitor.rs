//! The action rule's parts of the builder: when it runs, what it does, and its
//! conditions, each of which can be negated.

use leptos::prelude::*;

use super::{error_line, id_prefix, number_input, options, Builder, Part};
use crate::api::{
    action_rules::{ACTION_CONDITION_TYPES, TRIGGERS, VISITOR_ACTION_TYPES},
    rules::{ConditionDraft, RuleDraft},
};
use crate::erase::EraseView;

/// Day choices of a time window: API `Weekday` value, label.
const DAYS: [(&str, &str); 10] = [
    ("EVERYDAY", "every day"),
    ("WORKDAYS", "Monday to Friday"),
    ("WEEKEND", "Saturday and Sunday"),
    ("MONDAY", "Mondays"),
    ("TUESDAY", "Tuesdays"),
    ("WEDNESDAY", "Wednesdays"),
    ("THURSDAY", "Thursdays"),
    ("FRIDAY", "Fridays"),
    ("SATURDAY", "Saturdays"),
    ("SUNDAY", "Sundays"),
];

fn choices(list: &'static [(&'static str, &'static str)], selected: &str) -> impl IntoView {
    let selected = selected.to_string();
    list.iter()
        .map(|(v, label)| view! { <option value=*v selected=*v == selected>{*label}</option> })
        .collect_view()
}

/// When the rule runs, and what it does when it matches.
pub(super) fn trigger_and_action(b: Builder, rule: &RuleDraft) -> impl IntoView {
    let action = rule.visitor_action.clone();
    let flows = b.refs.with_value(|r| r.flows.clone());
    let on_trigger = move |ev| {
        let v = event_target_value(&ev);
        b.edit(&[], |r| r.trigger = v)
    };
    let on_kind = move |ev| {
        let v = event_target_value(&ev);
        b.reshape(&[], |r| r.visitor_action.kind = v)
    };
    let on_message = move |ev| {
        let v = event_target_value(&ev);
        b.edit(&[], |r| r.visitor_action.message = v)
    };
    let on_flow = move |ev| {
        let v = event_target_value(&ev);
        b.edit(&[], |r| r.visitor_action.flow_id = v)
    };
    let says = matches!(action.kind.as_str(), "OPEN_CHAT" | "OFFER_CALL");
    let opens = action.kind == "OPEN_CHAT";
    view! {
        <div class="field">
            <label for="rule-trigger">"Runs"</label>
            <select id="rule-trigger" on:change=on_trigger>{choices(&TRIGGERS, &rule.trigger)}</select>
            {error_line(b.message("trigger".into()))}
        </div>
        <fieldset>
            <legend>"Then"</legend>
            <div class="field">
                <label for="rule-action">"Action"</label>
                <select id="rule-action" on:change=on_kind>{choices(&VISITOR_ACTION_TYPES, &action.kind)}</select>
            </div>
            {says.then(|| view! {
                <div class="field grow">
                    <label for="rule-action-message">{if opens { "Message" } else { "Offer (optional)" }}</label>
                    <textarea id="rule-action-message" rows="2" maxlength="2000" prop:value=action.message.clone()
                        on:input=on_message aria-describedby="rule-action-hint"></textarea>
                    <p class="hint" id="rule-action-hint">
                        {if opens {
                            "The visitor sees it at once; it joins the conversation only when they answer."
                        } else {
                            "Left empty, the chat offers the call in the visitor's language."
                        }}
                    </p>
                </div>
            })}
            {opens.then(|| view! {
                <div class="field">
                    <label for="rule-action-flow">"Or send a flow"</label>
                    <select id="rule-action-flow" on:change=on_flow>{options(&flows, &action.flow_id)}</select>
                </div>
            })}
            {error_line(b.message("action".into()))}
        </fieldset>
    }
}

/// One condition of an action rule.
pub(super) fn condition_view(b: Builder, path: &[usize], i: usize, c: ConditionDraft) -> AnyView {
    let id = {
        let ids = id_prefix(path);
        move |part: &str| format!("{ids}-condition-{i}-{part}")
    };
    let set = move |change: Box<dyn FnOnce(&mut ConditionDraft)>| {
        b.edit(&[], move |r| {
            if let Some(c) = r.conditions.get_mut(i) {
                change(c)
            }
        })
    };
    let on_kind = move |ev| {
        let v = event_target_value(&ev);
        b.reshape(&[], |r| {
            if let Some(c) = r.conditions.get_mut(i) {
                c.kind = v
            }
        })
    };
    let remove = move |_| {
        b.reshape(&[], |r| {
            if i < r.conditions.len() {
                r.conditions.remove(i);
            }
        })
    };
    let text_field = |part: &'static str, label: &'static str, value: String, hint: &'static str| {
        let apply = move |c: &mut ConditionDraft, v: String| match part {
            "name" => c.name = v,
            "from" => c.from = v,
            "to" => c.to = v,
            "zone" => c.time_zone = v,
            _ => c.list = v,
        };
        view! {
            <div class="field">
                <label for=id(part)>{label}</label>
                <input id=id(part) type="text" prop:value=value autocomplete="off" aria-describedby=id(&format!("{part}-hint"))
                    on:input=move |ev| { let v = event_target_value(&ev); set(Box::new(move |c| apply(c, v))) } />
                <p class="hint" id=id(&format!("{part}-hint"))>{hint}</p>
            </div>
        }
    };
    let fields = match c.kind.as_str() {
        "URL" => text_field("list", "Page addresses", c.list.clone(), "* matches anything: https://shop.example.com/checkout*").erase(),
        "HAS_TAG" => view! {
            {text_field("list", "Tags", c.list.clone(), "Tags the page gives the visitor: Rapport('tag', …).")}
            <div class="field">
                <label for=id("match")>"Match"</label>
                <select id=id("match") on:change=move |ev| { let v = event_target_value(&ev) == "ALL"; set(Box::new(move |c| c.all = v)) }>
                    <option value="ANY" selected=!c.all>"any of the tags"</option>
                    <option value="ALL" selected=c.all>"every tag"</option>
                </select>
            </div>
        }
        .erase(),
        "JS_EVENT" => text_field("name", "Event name", c.name.clone(), "The page calls Rapport('event', 'this name').").erase(),
        "TIME_ON_PAGE" => view! {
            <div class="field">
                <label for=id("seconds")>"Seconds on the page"</label>
                {number_input(id("seconds"), c.seconds, move |v| set(Box::new(move |c| c.seconds = v)))}
            </div>
        }
        .erase(),
        "OPENING_HOURS" => {
            let hours = b.refs.with_value(|r| r.opening_hours.clone());
            view! {
                <div class="field">
                    <label for=id("hours")>"Opening hours"</label>
                    <select id=id("hours") on:change=move |ev| { let v = event_target_value(&ev); set(Box::new(move |c| c.opening_hours_id = v)) }>
                        {options(&hours, &c.opening_hours_id)}
                    </select>
                </div>
            }
            .erase()
        }
        "TIME_WINDOW" => view! {
            <div class="field">
                <label for=id("days")>"On"</label>
                <select id=id("days") on:change=move |ev| { let v = event_target_value(&ev); set(Box::new(move |c| c.days = v)) }>
                    {choices(&DAYS, &c.days)}
                </select>
            </div>
            {text_field("from", "From", c.from.clone(), "HH:MM")}
            {text_field("to", "To", c.to.clone(), "HH:MM; at or before From, the next day")}
            {text_field("zone", "Time zone", c.time_zone.clone(), "Empty: the workspace's. Or e.g. Europe/Berlin.")}
        }
        .erase(),
        _ => ().erase(),
    };
    let negate = view! {
        <div class="field checkbox">
            <input id=id("negate") type="checkbox" prop:checked=c.negate
                on:change=move |ev| { let v = event_target_checked(&ev); set(Box::new(move |c| c.negate = v)) } />
            <label for=id("negate")>"Not"</label>
        </div>
    };
    let part = Part {
        list: "conditions",
        noun: "Condition",
        types: &ACTION_CONDITION_TYPES,
    };
    part.row(
        b,
        "",
        i,
        id("type"),
        &c.kind,
        on_kind,
        view! { {negate} {fields} }.erase(),
        remove,
    )
    .erase()
}
