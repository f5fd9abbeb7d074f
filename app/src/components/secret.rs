//! A secret shown once, with a copy button.

use leptos::prelude::*;

use super::copy::CopyField;

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
    view! {
        <div class="secret" role="status">
            <p><strong>{label.clone()}</strong>" — copy it now: it will not be shown again."</p>
            <CopyField label=label value=value />
        </div>
    }
}
