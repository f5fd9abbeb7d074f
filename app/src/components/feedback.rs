//! Error and empty-state notes, and the messages shown next to form fields.

use leptos::prelude::*;

use crate::api::problem::Problem;

/// An error message in a live region, so screen readers announce it.
#[component]
pub fn ErrorNote(#[prop(into)] error: String) -> impl IntoView {
    let message = Problem::from_text(&error).message;
    view! { <p class="note error" role="alert">{message}</p> }
}

/// The error of a server action's last run, if it failed.
#[component]
pub fn ActionError<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, ServerFnError>>>,
) -> impl IntoView {
    move || match value.get() {
        Some(Err(e)) => Some(view! { <ErrorNote error=e.to_string() /> }),
        _ => None,
    }
}

/// The problem a server action's last run reported, if any.
pub fn action_problem<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, ServerFnError>>>,
) -> Signal<Option<Problem>> {
    Signal::derive(move || match value.get() {
        Some(Err(e)) => Some(Problem::of(&e)),
        _ => None,
    })
}

/// The message for one form field, under the field. Give the input
/// `aria-describedby` = `id` and `aria-invalid` from [`field_invalid`].
#[component]
pub fn FieldMessage(
    /// The form's last problem.
    problem: Signal<Option<Problem>>,
    /// The API field path it shows (`url`, `eventTypes`, `intervals[3]`).
    #[prop(into)]
    field: String,
    /// The element id the input points to.
    #[prop(into)]
    id: String,
) -> impl IntoView {
    move || {
        problem
            .get()
            .and_then(|p| p.field(&field))
            .map(|message| view! { <p class="field-error" id=id.clone()>{message}</p> })
    }
}

/// Whether `field` has a message: for `aria-invalid`.
pub fn field_invalid(problem: Signal<Option<Problem>>, field: impl Into<String>) -> impl Fn() -> Option<&'static str> {
    let field = field.into();
    move || problem.get().and_then(|p| p.field(&field)).map(|_| "true")
}

/// Clears an "add" form once its action succeeded, so the next entry starts
/// empty (and the unsaved-change guard sees nothing unsaved).
pub fn reset_on_success<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, ServerFnError>>>,
    form: NodeRef<leptos::html::Form>,
) {
    Effect::new(move |_| {
        if matches!(value.get(), Some(Ok(_))) {
            if let Some(form) = form.get_untracked() {
                form.reset();
            }
        }
    });
}

/// Counts an action's successful runs. A page that re-reads an object after
/// saving it keys its resource on this rather than on the action's version, so
/// that a refused save re-renders nothing and keeps what was typed next to the
/// problems.
pub fn successes<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, ServerFnError>>>,
) -> ReadSignal<u32> {
    let (count, set_count) = signal(0u32);
    Effect::new(move |_| {
        if matches!(value.get(), Some(Ok(_))) {
            set_count.update(|n| *n += 1);
        }
    });
    count
}

/// "Saved." once an action's last run succeeded, announced politely.
#[component]
pub fn SavedNote<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, ServerFnError>>>,
) -> impl IntoView {
    move || matches!(value.get(), Some(Ok(_))).then(|| view! { <p class="note ok" role="status">"Saved."</p> })
}
