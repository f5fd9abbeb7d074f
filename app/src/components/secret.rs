//! A secret shown once, with a copy button.

use leptos::prelude::*;

/// Shows `value` once, read-only and selectable, with a button that copies it.
#[component]
pub fn OneTimeSecret(
    /// What the secret is, e.g. "API key token".
    #[prop(into)]
    label: String,
    /// The secret.
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
    view! {
        <div class="secret" role="status">
            <p><strong>{label.clone()}</strong>" — copy it now: it will not be shown again."</p>
            <div class="secret-row">
                <input class="secret-value" readonly=true value=value aria-label=label onfocus="this.select()" />
                <button type="button" class="button" on:click=copy>
                    {move || if copied.get() { "Copied" } else { "Copy" }}
                </button>
            </div>
        </div>
    }
}
