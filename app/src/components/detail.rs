//! The parts every detail page (`/settings/<things>/{id}`, an appointment) is
//! made of: the frame (guard, breadcrumb, the object or why it could not be
//! read), the edit card and the delete card. Each form works as a plain post
//! without JavaScript.

use std::future::IntoFuture;

use leptos::{prelude::*, server_fn::ServerFn};
use serde::de::DeserializeOwned;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::{
    feedback::{ActionError, ErrorNote, SavedNote},
    layout::Guard,
    lists::DangerZone,
};
use crate::erase::{EraseView, SyncChildren, SyncChildrenFn};
use rapport_core::model::SessionUser;

/// Where a detail page leads back to: its list (or calendar).
#[derive(Debug, Clone)]
pub struct BackTo {
    /// The list's path.
    pub path: &'static str,
    /// The breadcrumb's text, e.g. "Settings › Teams".
    pub crumb: String,
    /// The way back when the object cannot be read, e.g. "Back to the teams".
    pub text: String,
}

/// The frame of a detail page: the role's guard, the breadcrumb to its list,
/// and, once `load` has read the object, the page `render` makes of it, or
/// why it could not be read (see [`LoadFailed`]). Its `children` follow, as
/// long as the guard lets the user in.
///
/// The page creates its resources before the frame, outside the guard's
/// `Suspense` (see [`Guard`]); `load` only awaits them.
#[component]
pub fn DetailFrame<T, L, Fut, R, V>(
    /// The page's name, the heading when the object cannot be read.
    title: &'static str,
    /// Who may open the page.
    allowed: fn(&SessionUser) -> bool,
    /// The list the page belongs to.
    back: BackTo,
    /// What shows while the object is read, e.g. "Loading the team…".
    loading: &'static str,
    /// The object: a resource, or an async block that awaits several.
    load: L,
    /// The page for the object.
    render: R,
    /// What follows the object, for pages with more than it.
    #[prop(optional)]
    children: Option<SyncChildrenFn>,
) -> impl IntoView
where
    T: 'static,
    L: Fn() -> Fut + Clone + Send + Sync + 'static,
    Fut: IntoFuture<Output = Result<T, ServerFnError>> + 'static,
    Fut::IntoFuture: Send,
    R: Fn(T) -> V + Clone + Send + Sync + 'static,
    V: IntoView + 'static,
{
    let BackTo { path, crumb, text } = back;
    // Read anew each time the guard or the object renders.
    let frame = StoredValue::new((load, render, text));
    view! {
        <Guard allowed>
            <p class="breadcrumb"><a href=path>{crumb.clone()}</a></p>
            <Suspense fallback=move || view! { <p class="loading" aria-busy="true">{loading}</p> }>
                {move || Suspend::new(async move {
                    let (load, render, text) = frame.get_value();
                    match load().await {
                        Ok(object) => render(object).erase(),
                        Err(e) => view! {
                            <LoadFailed title error=e.to_string() back=path back_text=text />
                        }.erase(),
                    }
                })}
            </Suspense>
            {children.as_ref().map(SyncChildrenFn::view)}
        </Guard>
    }
}

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
    back_text: String,
) -> impl IntoView {
    view! {
        <h1>{title}</h1>
        <ErrorNote error />
        <p><a href=back>{back_text}</a></p>
    }
}
