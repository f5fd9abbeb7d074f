//! Settings → Flows (admins): ordered messages a routing rule's `SEND_FLOW`
//! action sends to the customer. `/settings/flows` lists them;
//! `/settings/flows/new` and `/settings/flows/{id}` open the editor, where
//! messages are added, removed and moved up or down, and a saved flow is deleted
//! (refused while a routing rule sends it).
//!
//! The editor works like the rule builder: the messages live in a
//! [`StoredValue`], typing changes them without re-rendering (focus stays put),
//! and adding, removing, moving or switching a type bumps `shape`, which
//! re-renders the list. Every change rewrites the form's `messages` field, the
//! REST API's JSON array; before the page is live (or without JavaScript) that
//! field is a visible text box and the editor is hidden.

use crate::components::route::use_path_param;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        flows::{
            get_flow, list_flows, messages_json, FlowMessageDraft, FlowSummary, FlowView, RemoveFlow, SaveFlow,
            FLOWS_PATH, FLOW_MESSAGE_TYPES, MAX_MESSAGES,
        },
        problem::Problem,
    },
    components::{
        detail::{BackTo, DetailFrame},
        feedback::{action_problem, field_invalid, successes, ActionError, ErrorNote, FieldMessage, SavedNote},
        layout::{admins, Guard},
        lists::DangerZone,
    },
};

/// `/settings/flows`.
#[component]
pub fn FlowsPage() -> impl IntoView {
    let flows = Resource::new(|| (), |_| list_flows());
    view! {
        <Title text="Flows" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Flows"</h1>
            <p class="lead">"Messages a routing rule sends to the customer one after the other: a greeting, a card with a link, a file."</p>
            <p><a class="button primary" href=format!("{FLOWS_PATH}/new")>"New flow"</a></p>
            <section class="card">
                <h2>"Flows"</h2>
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading flows…"</p> }>
                    {move || Suspend::new(async move {
                        match flows.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">"No flow yet. Start one with “New flow”."</p>
                            }.erase(),
                            Ok(list) => view! { <FlowTable list /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

#[component]
fn FlowTable(list: Vec<FlowSummary>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Flows"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Name"</th>
                        <th scope="col">"First message"</th>
                        <th scope="col" class="number">"Messages"</th>
                    </tr>
                </thead>
                <tbody>
                    {list.into_iter().map(|f| view! {
                        <tr>
                            <td><a href=format!("{FLOWS_PATH}/{}", f.id)>{f.name}</a></td>
                            <td>{f.first}</td>
                            <td class="number">{f.messages.to_string()}</td>
                        </tr>
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// `/settings/flows/{id}` (`new` for a new one).
#[component]
pub fn FlowPage() -> impl IntoView {
    let id = use_path_param("id");
    let save = FormAction::<SaveFlow>::new();
    let remove = FormAction::<RemoveFlow>::new();
    // Re-read after a successful save only: a refused save keeps what was typed.
    let saved = successes(save.value());
    let flow = Resource::new(
        move || (id(), saved.get()),
        |(id, _)| async move {
            if id == "new" {
                Ok(None)
            } else {
                get_flow(id).await.map(Some)
            }
        },
    );
    let problem = action_problem(save.value());
    let back = BackTo {
        path: FLOWS_PATH,
        crumb: "Settings › Flows".into(),
        text: "Back to the flows".into(),
    };
    let render = move |flow: Option<FlowView>| {
        let (heading, id, name, messages) = match flow {
            Some(f) => (f.name.clone(), Some(f.id), f.name, f.messages),
            None => (
                "New flow".to_string(),
                None,
                String::new(),
                vec![FlowMessageDraft::default()],
            ),
        };
        let (form_id, remove_id) = (id.clone().unwrap_or_default(), id);
        view! {
            <h1>{heading}</h1>
            <section class="card">
                <PostForm action=save attr:data-unsaved-guard="">
                    <input type="hidden" name="id" value=form_id />
                    <div class="field">
                        <label for="flow-name">"Name"</label>
                        <input id="flow-name" name="name" type="text" required=true maxlength="200" value=name
                            autocomplete="off" aria-invalid=field_invalid(problem, "name") aria-describedby="flow-name-error" />
                        <FieldMessage problem field="name" id="flow-name-error" />
                    </div>
                    <FlowMessages messages problem />
                    <button type="submit" class="button primary" disabled=move || save.pending().get()>"Save flow"</button>
                </PostForm>
                <ActionError value=save.value() />
                <SavedNote value=save.value() />
            </section>
            {remove_id.map(|rid| view! {
                <DangerZone title="Delete the flow" summary="Delete this flow…"
                    consequence="Refused while a routing rule sends it. This cannot be undone.">
                    <PostForm action=remove>
                        <input type="hidden" name="id" value=rid />
                        <button type="submit" class="button danger">"Delete permanently"</button>
                    </PostForm>
                </DangerZone>
                <ActionError value=remove.value() />
            })}
        }
    };
    view! {
        <Title text="Flow" />
        <DetailFrame title="Flow" allowed=admins back loading="Loading the flow…" load=move || flow render />
    }
}

#[derive(Clone, Copy)]
struct Editor {
    list: StoredValue<Vec<FlowMessageDraft>>,
    shape: RwSignal<u32>,
    json: RwSignal<String>,
    problem: Signal<Option<Problem>>,
}

impl Editor {
    /// Changes the messages and the submitted JSON.
    fn edit(self, change: impl FnOnce(&mut Vec<FlowMessageDraft>)) {
        self.list.update_value(change);
        self.json.set(self.list.with_value(|l| messages_json(l)));
    }

    /// Changes the messages in a way that changes what is shown.
    fn reshape(self, change: impl FnOnce(&mut Vec<FlowMessageDraft>)) {
        self.edit(change);
        self.shape.update(|n| *n += 1);
    }

    /// Changes message `i`.
    fn set(self, i: usize, change: impl FnOnce(&mut FlowMessageDraft)) {
        self.edit(|l| {
            if let Some(m) = l.get_mut(i) {
                change(m)
            }
        })
    }

    fn message(self, field: String) -> impl Fn() -> Option<String> + Send + Sync + 'static {
        move || self.problem.get().and_then(|p| p.field(&field))
    }
}

/// The messages and the `messages` field they fill.
#[component]
fn FlowMessages(messages: Vec<FlowMessageDraft>, problem: Signal<Option<Problem>>) -> impl IntoView {
    let json = RwSignal::new(messages_json(&messages));
    let e = Editor {
        list: StoredValue::new(messages),
        shape: RwSignal::new(0),
        json,
        problem,
    };
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    // The flow as loaded is the field's default, which the unsaved-change guard
    // compares with (set here, as the rule builder does, since Leptos may reuse
    // the element when a saved flow re-renders).
    let field = NodeRef::<leptos::html::Textarea>::new();
    let loaded = json.get_untracked();
    Effect::new(move |_| {
        if let Some(field) = field.get() {
            let _ = field.set_default_value(&loaded);
        }
    });
    let whole = move || problem.get().and_then(|p| p.exact_field("messages"));
    view! {
        <div class="field" hidden=move || live.get()>
            <label for="flow-json">"The messages as JSON, in the REST API's shape"</label>
            <textarea id="flow-json" name="messages" rows="12" class="code" node_ref=field prop:value=move || json.get()
                aria-describedby="flow-json-error">{json.get_untracked()}</textarea>
            <p class="field-error" id="flow-json-error">{move || problem.get().and_then(|p| p.field("messages"))}</p>
        </div>
        <fieldset class="flow-messages" hidden=move || !live.get()>
            <legend>"Messages, in the order they are sent"</legend>
            {move || {
                e.shape.track();
                let list = e.list.get_value();
                let count = list.len();
                let full = count >= MAX_MESSAGES;
                view! {
                    <ol class="rule-parts">
                        {list.into_iter().enumerate().map(|(i, m)| message_row(e, i, count, m)).collect_view()}
                    </ol>
                    <button type="button" class="button secondary" disabled=full
                        on:click=move |_| e.reshape(|l| l.push(FlowMessageDraft::default()))>"Add a message"</button>
                }
            }}
            {move || whole().map(|m| view! { <p class="field-error" role="alert">{m}</p> })}
        </fieldset>
    }
}

fn message_row(e: Editor, i: usize, count: usize, m: FlowMessageDraft) -> impl IntoView {
    let id = move |part: &str| format!("flow-message-{i}-{part}");
    let n = i + 1;
    let text_input = |part: &'static str,
                      label: &'static str,
                      value: String,
                      max: &'static str,
                      set: fn(&mut FlowMessageDraft, String)| {
        view! {
            <div class="field grow">
                <label for=id(part)>{label}</label>
                <input id=id(part) type="text" maxlength=max prop:value=value autocomplete="off"
                    on:input=move |ev| { let v = event_target_value(&ev); e.set(i, move |m| set(m, v)) } />
            </div>
        }
    };
    let media = matches!(m.kind.as_str(), "FILE" | "AUDIO" | "VIDEO");
    let card = m.kind == "CARD";
    let (first, last) = (i == 0, i + 1 >= count);
    let caption = if m.kind == "MESSAGE" {
        "Text"
    } else {
        "Caption (optional)"
    };
    view! {
        <li class="rule-part">
            <div class="field-row">
                <div class="field">
                    <label for=id("type")>{format!("Message {n}")}</label>
                    <select id=id("type") on:change=move |ev| { let v = event_target_value(&ev); e.reshape(|l| if let Some(m) = l.get_mut(i) { m.kind = v }) }>
                        {FLOW_MESSAGE_TYPES.iter().map(|(v, label)| view! { <option value=*v selected=m.kind == *v>{*label}</option> }).collect_view()}
                    </select>
                </div>
                <div class="field grow">
                    <label for=id("text")>{caption}</label>
                    <textarea id=id("text") rows="2" maxlength="10000" prop:value=m.message.clone()
                        on:input=move |ev| { let v = event_target_value(&ev); e.set(i, move |m| m.message = v) }></textarea>
                </div>
            </div>
            {media.then(|| text_input("url", "Address of the file (https://…)", m.url.clone(), "2048", |m, v| m.url = v))}
            {card.then(|| view! {
                <div class="field-row">
                    {text_input("button-text", "Button text", m.button_text.clone(), "200", |m, v| m.button_text = v)}
                    {text_input("button-link", "Button link (https://…)", m.button_link.clone(), "2048", |m, v| m.button_link = v)}
                </div>
            })}
            <div class="field-row">
                <button type="button" class="button secondary small" disabled=first
                    on:click=move |_| e.reshape(|l| if i > 0 && i < l.len() { l.swap(i - 1, i) })>{format!("Move message {n} up")}</button>
                <button type="button" class="button secondary small" disabled=last
                    on:click=move |_| e.reshape(|l| if i + 1 < l.len() { l.swap(i, i + 1) })>{format!("Move message {n} down")}</button>
                <button type="button" class="button secondary small"
                    on:click=move |_| e.reshape(|l| { if i < l.len() { l.remove(i); } })>{format!("Remove message {n}")}</button>
            </div>
            {move || e.message(format!("messages[{i}]"))().map(|m| view! { <p class="field-error" role="alert">{m}</p> })}
        </li>
    }
}
