//! Settings → System messages (admins): texts routing rules send, one language
//! each; messages with the same name are translations of each other.
//! `/settings/system-messages` lists them grouped by language (filter with
//! `?language=de`) and adds one; `/settings/system-messages/{id}` edits or
//! deletes one (refused while a routing rule sends it).

use std::collections::BTreeMap;

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::{
        problem::Problem,
        system_messages::{
            get_system_message, list_system_messages, AddSystemMessage, EditSystemMessage, RemoveSystemMessage,
            SystemMessageView, SYSTEM_MESSAGES_PATH,
        },
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, reset_on_success, successes, ActionError, ErrorNote, FieldMessage},
        layout::{admins, encode_query, Guard},
    },
};

/// Suggested language tags; any BCP 47 tag is accepted.
const LANGUAGES: [(&str, &str); 8] = [
    ("en", "English"),
    ("de", "German"),
    ("fr", "French"),
    ("es", "Spanish"),
    ("it", "Italian"),
    ("nl", "Dutch"),
    ("uk", "Ukrainian"),
    ("ja", "Japanese"),
];

/// `/settings/system-messages`.
#[component]
pub fn SystemMessagesPage() -> impl IntoView {
    let add = FormAction::<AddSystemMessage>::new();
    let query = use_query_map();
    let language = move || query.with(|q| q.get("language")).unwrap_or_default();
    let messages = Resource::new(
        move || (language(), add.version().get()),
        |(language, _)| list_system_messages(Some(language)),
    );
    let form = NodeRef::new();
    reset_on_success(add.value(), form);
    view! {
        <Title text="System messages" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"System messages"</h1>
            <p class="lead">
                "Texts routing rules send to customers, such as “all agents are busy”. Write one per language, "
                "with the same name for each translation: a rule that sends one sends the customer the one in "
                "their language, else the one in the workspace's language. "
                "To send several messages in a row, or a card with a link, use a " <a href="/settings/flows">"flow"</a> "."
            </p>
            <section class="card">
                <h2>"Add a message"</h2>
                <PostForm action=add node_ref=form attr:data-unsaved-guard="">
                    <MessageFields message=None problem=action_problem(add.value()) />
                    <button type="submit" class="button primary" disabled=move || add.pending().get()>"Add message"</button>
                </PostForm>
                <ActionError value=add.value() />
                {move || add.value().get().and_then(Result::ok).map(|m| view! {
                    <p class="note ok" role="status">{format!("Added a message in {}.", m.language)}</p>
                })}
            </section>
            <section class="card">
                <h2>"Messages by language"</h2>
                <form method="get" action=SYSTEM_MESSAGES_PATH class="field-row" role="search">
                    <div class="field">
                        <label for="language-filter">"Only the language"</label>
                        <input id="language-filter" name="language" type="text" value=language list="language-tags"
                            placeholder="de" autocomplete="off" />
                    </div>
                    <button type="submit" class="button secondary">"Filter"</button>
                </form>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading messages…"</p> }>
                    {move || Suspend::new(async move {
                        match messages.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">"No message here yet. Add one above."</p>
                            }.erase(),
                            Ok(list) => view! { <ByLanguage list /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
        </Guard>
    }
}

#[component]
fn ByLanguage(list: Vec<SystemMessageView>) -> impl IntoView {
    let mut groups: BTreeMap<String, Vec<SystemMessageView>> = BTreeMap::new();
    for m in list {
        groups.entry(m.language.clone()).or_default().push(m);
    }
    groups
        .into_iter()
        .map(|(language, messages)| {
            let heading = language_name(&language);
            let filter = format!("{SYSTEM_MESSAGES_PATH}?language={}", encode_query(&language));
            view! {
                <h3><a href=filter>{heading}</a></h3>
                <ul class="plain-list">
                    {messages.into_iter().map(|m| view! {
                        <li>
                            {(!m.name.is_empty()).then(|| view! { <span class="tag message-name">{m.name.clone()}</span> " " })}
                            <a href=format!("{SYSTEM_MESSAGES_PATH}/{}", m.id)>{m.message}</a>
                        </li>
                    }).collect_view()}
                </ul>
            }
        })
        .collect_view()
}

/// "German (de)" for a known tag, else the tag.
fn language_name(tag: &str) -> String {
    LANGUAGES
        .iter()
        .find(|(t, _)| t.eq_ignore_ascii_case(tag))
        .map_or_else(|| tag.to_string(), |(t, name)| format!("{name} ({t})"))
}

/// Language and text, shared by the add and edit forms.
#[component]
fn MessageFields(message: Option<SystemMessageView>, problem: Signal<Option<Problem>>) -> impl IntoView {
    let prefix = if message.is_some() { "edit" } else { "new" };
    let id = move |name: &str| format!("{prefix}-system-message-{name}");
    let (language, text, name) = message.map(|m| (m.language, m.message, m.name)).unwrap_or_default();
    view! {
        <div class="field">
            <label for=id("name")>"Name " <span class="muted">"(optional)"</span></label>
            <input id=id("name") name="name" type="text" maxlength="200" value=name autocomplete="off"
                placeholder="busy" aria-invalid=field_invalid(problem, "name")
                aria-describedby=format!("{} {}", id("name-hint"), id("name-error")) />
            <p class="hint" id=id("name-hint")>"Messages with the same name are translations of each other."</p>
            <FieldMessage problem field="name" id=id("name-error") />
        </div>
        <div class="field">
            <label for=id("language")>"Language"</label>
            <input id=id("language") name="language" type="text" required=true maxlength="35" value=language
                list="language-tags" autocomplete="off" placeholder="en"
                aria-invalid=field_invalid(problem, "language")
                aria-describedby=format!("{} {}", id("language-hint"), id("language-error")) />
            <p class="hint" id=id("language-hint")>"A BCP 47 tag: en, de, de-CH, pt-BR…"</p>
            <FieldMessage problem field="language" id=id("language-error") />
        </div>
        <datalist id="language-tags">
            {LANGUAGES.iter().map(|(tag, name)| view! { <option value=*tag>{*name}</option> }).collect_view()}
        </datalist>
        <div class="field">
            <label for=id("message")>"Message"</label>
            <textarea id=id("message") name="message" required=true maxlength="4000" rows="3"
                aria-invalid=field_invalid(problem, "message") aria-describedby=id("message-error")>{text}</textarea>
            <FieldMessage problem field="message" id=id("message-error") />
        </div>
    }
}

/// `/settings/system-messages/{id}`.
#[component]
pub fn SystemMessagePage() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditSystemMessage>::new();
    let remove = FormAction::<RemoveSystemMessage>::new();
    let edit_saved = successes(edit.value());
    let message = Resource::new(move || (id(), edit_saved.get()), |(id, _)| get_system_message(id));
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: SYSTEM_MESSAGES_PATH,
        crumb: "Settings › System messages".into(),
        text: "Back to the system messages".into(),
    };
    let render = move |m: SystemMessageView| {
        let (edit_id, remove_id) = (m.id.clone(), m.id.clone());
        view! {
            <h1>"System message"</h1>
            <EditCard action=edit id=edit_id>
                <MessageFields message=Some(m) problem />
            </EditCard>
            <DeleteCard title="Delete the message" summary="Delete this message…"
                consequence="Refused while a routing rule sends it. This cannot be undone."
                action=remove id=remove_id />
        }
    };
    view! {
        <Title text="System message" />
        <DetailFrame title="System message" allowed=admins back loading="Loading the message…" load=move || message render />
    }
}
