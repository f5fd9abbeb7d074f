//! The parts every settings detail page (`/settings/<things>/{id}`) is made of:
//! the edit card, the delete card, and what shows when the object cannot be read.
//! Each works as a plain form post without JavaScript.

use leptos::{
    prelude::*,
    server_fn::{client::Client, codec::PostUrl, request::ClientReq, Http, ServerFn},
    web_sys::FormData,
};
use serde::de::DeserializeOwned;

use crate::components::{
    feedback::{ActionError, ErrorNote, SavedNote},
    lists::DangerZone,
};

/// The card that edits an object: its fields (the children), the id in a
/// hidden field, "Save changes", and the outcome under the form. The form is
/// guarded against leaving with unsaved changes.
#[component]
pub fn EditCard<F, E: 'static>(
    /// The card's heading, e.g. "Team"; none when the page's own heading says it.
    #[prop(optional)]
    title: Option<&'static str>,
    /// The save action.
    action: ServerAction<F>,
    /// The object's id, posted as `id`.
    id: String,
    children: Children,
) -> impl IntoView
where
    F: DeserializeOwned + ServerFn<Protocol = Http<PostUrl, E>, Error = ServerFnError> + Clone + Send + Sync + 'static,
    <<F::Client as Client<ServerFnError>>::Request as ClientReq<ServerFnError>>::FormData: From<FormData>,
    F::Output: Clone + Send + Sync + 'static,
    F::Client: Client<ServerFnError>,
{
    view! {
        <section class="card">
            {title.map(|title| view! { <h2>{title}</h2> })}
            <ActionForm action attr:data-unsaved-guard="">
                <input type="hidden" name="id" value=id />
                {children()}
                <button type="submit" class="button primary" disabled=move || action.pending().get()>"Save changes"</button>
            </ActionForm>
            <ActionError value=action.value() />
            <SavedNote value=action.value() />
        </section>
    }
}

/// The card that deletes an object, behind a disclosure that says what
/// deleting does (see [`DangerZone`]), with the outcome under it.
#[component]
pub fn DeleteCard<F, E: 'static>(
    /// The heading, e.g. "Delete the team".
    title: &'static str,
    /// The summary that opens it, e.g. "Delete this team…".
    summary: &'static str,
    /// What deleting does.
    consequence: &'static str,
    /// The delete action.
    action: ServerAction<F>,
    /// The object's id, posted as `id`.
    id: String,
) -> impl IntoView
where
    F: DeserializeOwned + ServerFn<Protocol = Http<PostUrl, E>, Error = ServerFnError> + Clone + Send + Sync + 'static,
    <<F::Client as Client<ServerFnError>>::Request as ClientReq<ServerFnError>>::FormData: From<FormData>,
    F::Output: Clone + Send + Sync + 'static,
    F::Client: Client<ServerFnError>,
{
    view! {
        <DangerZone title summary consequence>
            <ActionForm action>
                <input type="hidden" name="id" value=id />
                <button type="submit" class="button danger">"Delete permanently"</button>
            </ActionForm>
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
