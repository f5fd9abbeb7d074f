//! Error and empty-state notes.

use leptos::prelude::*;

/// An error message in a live region, so screen readers announce it.
#[component]
pub fn ErrorNote(#[prop(into)] error: String) -> impl IntoView {
    let message = error
        .trim_start_matches("error running server function: ")
        .trim_start_matches("ServerFnError: ")
        .to_string();
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
