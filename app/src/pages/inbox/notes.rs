//! Private notes in the inbox's thread: shown among the messages, marked as
//! seen by agents only, and written under the reply box. `@` and a colleague's
//! e-mail address (or the part before its `@`) tells them, under their bell.

use leptos::prelude::*;

use crate::components::post_form::{FormAction, PostForm};
use crate::{
    api::inbox::{InboxNote, NoteView},
    components::feedback::{action_problem, field_invalid, reset_on_success, FieldMessage},
};

/// One note among the messages.
#[component]
pub fn NoteItem(note: NoteView) -> impl IntoView {
    view! {
        <li class="message note-entry" class:mentions-me=note.mentions_me>
            <p class="meta">
                <span class="who">{note.author}</span> " · " <time>{note.at}</time>
                " · " <span class="badge private">"Private note"</span>
            </p>
            <p class="text">{note.text}</p>
        </li>
    }
}

/// The note box, under the reply box.
#[component]
pub fn NoteForm(customer_id: String, action: FormAction<InboxNote>) -> impl IntoView {
    let problem = action_problem(action.value());
    let form = NodeRef::<leptos::html::Form>::new();
    reset_on_success(action.value(), form);
    view! {
        <PostForm action node_ref=form attr:class="note-form">
            <input type="hidden" name="customer_id" value=customer_id />
            <label for="note-text">"Private note"</label>
            <textarea id="note-text" name="text" rows="2" required=true maxlength="4000"
                placeholder="Only agents see this. @name tells a colleague."
                aria-invalid=field_invalid(problem, "text")
                aria-describedby="note-text-hint note-text-error"></textarea>
            <p class="hint" id="note-text-hint">
                "Never sent to the customer. Write @ and a colleague's e-mail address, or the part before its @, to tell them."
            </p>
            <FieldMessage problem field="text" id="note-text-error" />
            <button type="submit" class="button secondary" disabled=move || action.pending().get()>"Add note"</button>
        </PostForm>
    }
}
