//! A read-only value with a button that copies it.

use leptos::prelude::*;

/// Shows `value` read-only and selectable, with a Copy button. Without
/// JavaScript the value is still selected on focus, ready to copy by hand.
#[component]
pub fn CopyField(
    /// What the value is; the input's accessible name, and the button's.
    #[prop(into)]
    label: String,
    /// The value.
    #[prop(into)]
    value: String,
) -> impl IntoView {
    let copied = RwSignal::new(false);
    let to_copy = value.clone();
    let copy = move |_| {
        #[cfg(feature = "hydrate")]
        {
            if let Some(window) = web_sys::window() {
                let _ = window.navigator().clipboard().write_text(&to_copy);
                copied.set(true);
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = &to_copy;
    };
    // The visible word starts the accessible name ("Copy join link"), so that
    // speech users can say what they see.
    let what = format!(" {label}");
    view! {
        <div class="copy-row">
            <input class="copy-value" readonly=true value=value aria-label=label onfocus="this.select()" />
            <button type="button" class="button" on:click=copy>
                {move || if copied.get() { "Copied" } else { "Copy" }}
                <span class="visually-hidden">{what}</span>
            </button>
            <span class="visually-hidden" role="status">{move || if copied.get() { "Copied to the clipboard" } else { "" }}</span>
        </div>
    }
}
