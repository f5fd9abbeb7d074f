//! Form fields that several settings pages share.

use leptos::prelude::*;

/// A setting's checkbox in a server-function form, with a hint under its
/// label: the form sends `name=on` when it is checked and nothing when not,
/// so the server function reads it as an `Option<String>`.
#[component]
pub fn SettingCheckbox(
    /// The input's id; the hint's is `<id>-hint`.
    id: &'static str,
    /// The form field's name.
    name: &'static str,
    /// Whether it starts checked.
    checked: bool,
    /// What checking it means.
    label: &'static str,
    /// What follows from it.
    hint: &'static str,
) -> impl IntoView {
    let hint_id = format!("{id}-hint");
    view! {
        <div class="field checkbox">
            <input id=id name=name type="checkbox" value="on" checked=checked aria-describedby=hint_id.clone() />
            <label for=id>{label}</label>
            <p class="hint" id=hint_id>{hint}</p>
        </div>
    }
}
