//! The parts every settings detail page (`/settings/<things>/{id}`) is made of:
//! the edit card, the delete card, and what shows when the object cannot be read.
//! Each works as a plain form post without JavaScript.

use leptos::{prelude::*, server_fn::ServerFn};
use serde::de::DeserializeOwned;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::{
    feedback::{ActionError, ErrorNote, SavedNote},
    lists::DangerZone,
};
use crate::erase::SyncChildren;

/// The card that edits an object: its fields (the children), the id in a
/// hidden field, "Save changes", and the outcome under the form. The form is
/// guarded against leaving with unsaved changes.
#[component]
pub fn EditCard<F>(
    /// The card's heading, e.g. "Team"; none when the page's own heading says it.
    #[prop(optional)]
    title: Option<&'static str>,
    /// The save action.
    action: FormAction<F>,
    /// The object's id, posted as `id`.
    id: String,
    children: SyncChildren,
) -> impl IntoView
where
    F: ServerFn<Error = ServerFnError> + 'static,
    F::Output: DeserializeOwned + Clone + Send + Sync + 'static,
{
    view! {
        <section class="card">
            {title.map(|title| view! { <h2>{title}</h2> })}
            <PostForm action attr:data-unsaved-guard="">
                <input type="hidden" name="id" value=id />
                {children.view()}
                <button type="submit" class="button primary" disabled=move || action.pending().get()>"Save changes"</button>
            </PostForm>
            <ActionError value=action.value() />
            <SavedNote value=action.value() />
        </section>
    }
}

/// The card that deletes an object, behind a disclosure that says what
/// deleting does (see [`DangerZone`]), with the outcome under it.
#[component]
pub fn DeleteCard<F>(
    /// The heading, e.g. "Delete the team".
    title: &'static str,
    /// The summary that opens it, e.g. "Delete this team…".
    summary: &'static str,
    /// What deleting does.
    consequence: &'static str,
    /// The delete action.
    action: FormAction<F>,
    /// The object's id, posted as `id`.
    id: String,
) -> impl IntoView
where
    F: ServerFn<Error = ServerFnError> + 'static,
    F::Output: DeserializeOwned + Clone + Send + Sync + 'static,
{
    view! {
        <DangerZone title summary consequence>
            <PostForm action>
                <input type="hidden" name="id" value=id />
                <button type="submit" class="button danger">"Delete permanently"</button>
            </PostForm>
        </DangerZone>
        <ActionError value=action.value() />
    }
}

/// What a detail page shows when its object cannot be read (gone, another
/// tenant's, or the server failed): the heading, why, and the way back.
#[component]
pub fn LoadFailed(
    /// The page's heading, e.g. "Team".
    title: &'static str,
    /// The error.
    error: String,
    /// The list page to go back to.
    back: &'static str,
    /// The back link's text, e.g. "Back to the teams".
    back_text: &'static str,
) -> impl IntoView {
    view! {
        <h1>{title}</h1>
        <ErrorNote error />
        <p><a href=back>{back_text}</a></p>
    }
}
