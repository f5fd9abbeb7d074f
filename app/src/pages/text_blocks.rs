//! Settings → Text blocks (admins): answers agents insert in the inbox by
//! typing `/` and the shortcut. `/settings/text-blocks` lists them with how
//! often each was used (filter by shortcut) and adds one;
//! `/settings/text-blocks/{id}` edits or deletes one.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::{
        inbox::{inbox_assignees, Assignees},
        problem::Problem,
        text_blocks::{
            get_text_block, list_text_blocks, AddTextBlock, EditTextBlock, RemoveTextBlock, TextBlockView, SCOPES,
            TEXT_BLOCKS_PATH,
        },
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, reset_on_success, successes, ActionError, ErrorNote, FieldMessage},
        layout::{admins, Guard},
    },
};

/// `/settings/text-blocks`.
#[component]
pub fn TextBlocksPage() -> impl IntoView {
    let add = FormAction::<AddTextBlock>::new();
    let query = use_query_map();
    let shortcut = move || query.with(|q| q.get("shortcut")).unwrap_or_default();
    let blocks = Resource::new(
        move || (shortcut(), add.version().get()),
        |(shortcut, _)| list_text_blocks(Some(shortcut)),
    );
    let people = Resource::new(|| (), |_| inbox_assignees());
    let form = NodeRef::new();
    reset_on_success(add.value(), form);
    view! {
        <Title text="Text blocks" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Text blocks"</h1>
            <p class="lead">
                "Answers ready to insert. In a conversation, an agent types " <kbd>"/"</kbd>
                " and the shortcut, or picks one from the list, and the text takes the place of the draft, "
                "in the customer's language when a block of that shortcut has it. A block belongs to "
                "everyone, to a team's members or to one user; the closest one wins."
            </p>
            <section class="card">
                <h2>"Add a text block"</h2>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        let people = people.await.unwrap_or_default();
                        view! {
                            <PostForm action=add node_ref=form attr:data-unsaved-guard="">
                                <BlockFields block=None people problem=action_problem(add.value()) />
                                <button type="submit" class="button primary" disabled=move || add.pending().get()>"Add text block"</button>
                            </PostForm>
                        }
                    })}
                </Transition>
                <ActionError value=add.value() />
                {move || add.value().get().and_then(Result::ok).map(|b| view! {
                    <p class="note ok" role="status">{format!("Added /{}.", b.shortcut)}</p>
                })}
            </section>
            <section class="card">
                <h2>"Text blocks"</h2>
                <form method="get" action=TEXT_BLOCKS_PATH class="field-row" role="search">
                    <div class="field">
                        <label for="shortcut-filter">"Shortcut starts with"</label>
                        <input id="shortcut-filter" name="shortcut" type="text" value=shortcut autocomplete="off" placeholder="hello" />
                    </div>
                    <button type="submit" class="button secondary">"Filter"</button>
                </form>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading text blocks…"</p> }>
                    {move || Suspend::new(async move {
                        match blocks.await {
                            Ok(list) if list.blocks.is_empty() => view! {
                                <p class="empty">"No text block here yet. Add one above."</p>
                            }.erase(),
                            Ok(list) => view! { <BlockTable blocks=list.blocks total=list.total /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
        </Guard>
    }
}

#[component]
fn BlockTable(blocks: Vec<TextBlockView>, total: i64) -> impl IntoView {
    let shown = blocks.len() as i64;
    view! {
        <table class="data">
            <thead><tr><th>"Shortcut"</th><th>"Language"</th><th>"Shared with"</th><th>"Text"</th><th class="num">"Used"</th></tr></thead>
            <tbody>
                {blocks.into_iter().map(|b| view! {
                    <tr>
                        <td><a href=format!("{TEXT_BLOCKS_PATH}/{}", b.id)>{format!("/{}", b.shortcut)}</a></td>
                        <td>{if b.language.is_empty() { "Every language".to_string() } else { b.language }}</td>
                        <td>{scope_label(&b.scope)}</td>
                        <td class="clip">{b.text}</td>
                        <td class="num">{b.uses}</td>
                    </tr>
                }).collect_view()}
            </tbody>
        </table>
        {(total > shown).then(|| view! {
            <p class="note">{format!("Showing {shown} of {total}: filter by shortcut to find the others.")}</p>
        })}
    }
}

fn scope_label(scope: &str) -> &'static str {
    match scope {
        "TEAM" => "A team",
        "USER" => "One user",
        _ => "Everyone",
    }
}

/// Shortcut, language, text and owner, shared by the add and edit forms.
#[component]
fn BlockFields(block: Option<TextBlockView>, people: Assignees, problem: Signal<Option<Problem>>) -> impl IntoView {
    let prefix = if block.is_some() { "edit" } else { "new" };
    let id = move |name: &str| format!("{prefix}-text-block-{name}");
    let b = block.unwrap_or(TextBlockView {
        id: String::new(),
        shortcut: String::new(),
        language: String::new(),
        text: String::new(),
        scope: "TENANT".into(),
        owner: String::new(),
        uses: 0,
    });
    let owner = StoredValue::new(b.owner.clone());
    view! {
        <div class="field">
            <label for=id("shortcut")>"Shortcut"</label>
            <input id=id("shortcut") name="shortcut" type="text" required=true maxlength="40" value=b.shortcut
                pattern="[a-z0-9][a-z0-9_\\-]*" autocomplete="off" placeholder="hello"
                aria-invalid=field_invalid(problem, "shortcut")
                aria-describedby=format!("{} {}", id("shortcut-hint"), id("shortcut-error")) />
            <p class="hint" id=id("shortcut-hint")>"Lowercase letters, digits, _ and -. Agents type it after /."</p>
            <FieldMessage problem field="shortcut" id=id("shortcut-error") />
        </div>
        <div class="field">
            <label for=id("language")>"Language " <span class="muted">"(optional)"</span></label>
            <input id=id("language") name="language" type="text" maxlength="35" value=b.language autocomplete="off"
                placeholder="en" aria-invalid=field_invalid(problem, "language")
                aria-describedby=format!("{} {}", id("language-hint"), id("language-error")) />
            <p class="hint" id=id("language-hint")>
                "A BCP 47 tag (en, de-CH). Give the translations of one answer the same shortcut; "
                "without a language, the block serves every language."
            </p>
            <FieldMessage problem field="language" id=id("language-error") />
        </div>
        <div class="field">
            <label for=id("text")>"Text"</label>
            <textarea id=id("text") name="text" required=true maxlength="4000" rows="4"
                aria-invalid=field_invalid(problem, "text")
                aria-describedby=format!("{} {}", id("text-hint"), id("text-error"))>{b.text}</textarea>
            <p class="hint" id=id("text-hint")>
                "Variables: " <code>"{customer.firstName}"</code> ", " <code>"{customer.lastName}"</code> ", "
                <code>"{customer.name}"</code> ", " <code>"{agent.displayName}"</code> ", "
                <code>"{agent.firstName}"</code> ". " <code>"{customer.firstName|there}"</code>
                " says “there” when the name is unknown."
            </p>
            <FieldMessage problem field="text" id=id("text-error") />
        </div>
        <fieldset class="field">
            <legend>"Shared with"</legend>
            {SCOPES.iter().map(|(value, label)| {
                let checked = *value == b.scope;
                view! {
                    <label class="choice">
                        <input type="radio" name="scope" value=*value checked=checked />" "{*label}
                    </label>
                }
            }).collect_view()}
        </fieldset>
        <div class="field-row">
            <div class="field">
                <label for=id("team")>"Team " <span class="muted">"(for a team's block)"</span></label>
                <select id=id("team") name="team_id" aria-invalid=field_invalid(problem, "teamId")
                    aria-describedby=id("team-error")>
                    <option value="">"—"</option>
                    {people.teams.into_iter().map(|(tid, name)| {
                        let selected = owner.with_value(|o| *o == tid);
                        view! { <option value=tid selected=selected>{name}</option> }
                    }).collect_view()}
                </select>
                <FieldMessage problem field="teamId" id=id("team-error") />
            </div>
            <div class="field">
                <label for=id("user")>"User " <span class="muted">"(for a personal block)"</span></label>
                <select id=id("user") name="user_id" aria-invalid=field_invalid(problem, "userId")
                    aria-describedby=id("user-error")>
                    <option value="">"—"</option>
                    {people.users.into_iter().map(|(uid, name)| {
                        let selected = owner.with_value(|o| *o == uid);
                        view! { <option value=uid selected=selected>{name}</option> }
                    }).collect_view()}
                </select>
                <FieldMessage problem field="userId" id=id("user-error") />
            </div>
        </div>
    }
}

/// `/settings/text-blocks/{id}`.
#[component]
pub fn TextBlockPage() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditTextBlock>::new();
    let remove = FormAction::<RemoveTextBlock>::new();
    let edit_saved = successes(edit.value());
    let block = Resource::new(
        move || (id(), edit_saved.get()),
        |(id, _)| async move {
            let block = get_text_block(id).await?;
            let people = inbox_assignees().await?;
            Ok::<_, ServerFnError>((block, people))
        },
    );
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: TEXT_BLOCKS_PATH,
        crumb: "Settings › Text blocks".into(),
        text: "Back to the text blocks".into(),
    };
    let render = move |(b, people): (TextBlockView, Assignees)| {
        let (edit_id, remove_id) = (b.id.clone(), b.id.clone());
        let uses = b.uses;
        view! {
            <h1>{format!("/{}", b.shortcut)}</h1>
            <p class="muted">{format!("Used in {uses} messages.")}</p>
            <EditCard action=edit id=edit_id>
                <BlockFields block=Some(b) people problem />
            </EditCard>
            <DeleteCard title="Delete the text block" summary="Delete this text block…"
                consequence="Agents can no longer insert it; the messages sent from it stay counted. This cannot be undone."
                action=remove id=remove_id />
        }
    };
    view! {
        <Title text="Text block" />
        <DetailFrame title="Text block" allowed=admins back loading="Loading the text block…" load=move || block render />
    }
}
