//! Settings → Workspace (admins): name, time zone and the widget key.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::workspace::{get_workspace, RotateWidgetKey, UpdateWorkspace},
    components::{
        copy::CopyField,
        feedback::{action_problem, field_invalid, successes, ActionError, ErrorNote, FieldMessage, SavedNote},
        layout::{admins, Guard},
        zones::{load_zone_names, ZoneNames},
    },
};

/// `/settings/workspace`.
#[component]
pub fn WorkspacePage() -> impl IntoView {
    view! {
        <Title text="Workspace" />
        <WorkspaceSettings />
    }
}

#[component]
fn WorkspaceSettings() -> impl IntoView {
    let update = FormAction::<UpdateWorkspace>::new();
    let rotate = FormAction::<RotateWidgetKey>::new();
    let update_saved = successes(update.value());
    let workspace = Resource::new(
        move || (update_saved.get(), rotate.version().get()),
        |_| get_workspace(),
    );
    let problem = action_problem(update.value());
    let zones = load_zone_names();
    // Its resources are created above, outside the guard's `Suspense` (see `Guard`).
    view! {
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Workspace"</h1>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading the workspace…"</p> }>
                {move || Suspend::new(async move {
                    match workspace.await {
                        Ok(w) => view! {
                            <section class="card">
                                <h2>"General"</h2>
                                <p>"Sign-in handle: " <code>{w.slug.clone()}</code></p>
                                <PostForm action=update attr:data-unsaved-guard="">
                                    <div class="field-row">
                                        <div class="field">
                                            <label for="workspace-name">"Name"</label>
                                            <input id="workspace-name" name="name" type="text" required=true maxlength="200"
                                                value=w.name.clone() aria-invalid=field_invalid(problem, "name")
                                                aria-describedby="workspace-name-error" />
                                            <FieldMessage problem field="name" id="workspace-name-error" />
                                        </div>
                                        <div class="field">
                                            <label for="workspace-zone">"Time zone"</label>
                                            <input id="workspace-zone" name="timezone" type="text" list="workspace-zones" required=true
                                                value=w.timezone.clone() autocomplete="off"
                                                aria-invalid=field_invalid(problem, "timezone")
                                                aria-describedby="workspace-zone-hint workspace-zone-error" />
                                            <p class="hint" id="workspace-zone-hint">
                                                "Reports cut days in this zone. After a change, daily totals are rebuilt from the next midnight; earlier days stay exact."
                                            </p>
                                            <FieldMessage problem field="timezone" id="workspace-zone-error" />
                                            <ZoneNames zones id="workspace-zones" />
                                        </div>
                                    </div>
                                    <button type="submit" class="button primary" disabled=move || update.pending().get()>"Save"</button>
                                </PostForm>
                                <ActionError value=update.value() />
                                <SavedNote value=update.value() />
                            </section>
                            <section class="card">
                                <h2>"Widget key"</h2>
                                <p>
                                    "The chat widget and the visitor script send this key. It is not a secret (it is in your pages), "
                                    "but rotating it stops pages that still embed the old one."
                                </p>
                                <CopyField label="widget key" value=w.widget_key.clone() />
                                <details>
                                    <summary>"Rotate the widget key…"</summary>
                                    <PostForm action=rotate>
                                        <button type="submit" class="button danger">"Rotate now"</button>
                                    </PostForm>
                                </details>
                                <ActionError value=rotate.value() />
                            </section>
                        }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}
