//! Settings → Workspace (admins): name, time zone, the website snippet with the
//! widget key, the settings routing and SLA clocks read (language, capacity,
//! business hours), what the visitor script records, and identity verification.

use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        opening_hours::OPENING_HOURS_PATH,
        recordings::{RecordingView, UpdateRecordingSettings},
        workspace::{
            get_workspace, RotateIdentitySecret, RotateWidgetKey, UpdateEngineSettings, UpdateIdentity,
            UpdateWorkspace, WorkspaceView,
        },
    },
    components::{
        copy::CopyField,
        feedback::{action_problem, field_invalid, successes, ActionError, ErrorNote, FieldMessage, SavedNote},
        fields::SettingCheckbox,
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
    let engines = FormAction::<UpdateEngineSettings>::new();
    let recording = FormAction::<UpdateRecordingSettings>::new();
    let identity = FormAction::<UpdateIdentity>::new();
    let rotate_identity = FormAction::<RotateIdentitySecret>::new();
    let identity_saved = successes(identity.value());
    let update_saved = successes(update.value());
    let engines_saved = successes(engines.value());
    let recording_saved = successes(recording.value());
    let workspace = Resource::new(
        move || {
            (
                update_saved.get(),
                engines_saved.get(),
                recording_saved.get(),
                rotate.version().get(),
                identity_saved.get(),
                rotate_identity.version().get(),
            )
        },
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
                        Ok(w) => { let settings = w.clone(); let identity_view = w.clone(); view! {
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
                            <EngineSettings w=settings action=engines />
                            <RecordingSettings r=w.recording.clone() action=recording />
                            <section class="card">
                                <h2>"Website snippet"</h2>
                                <p>
                                    "Paste this tag into the pages of your website, before "<code>"</body>"</code>
                                    ". It loads the chat widget and the visitor script without ever making the page wait, "
                                    "and the page works on if Rapport cannot be reached."
                                </p>
                                <CopyField label="snippet" value=w.snippet.clone() />
                                <p class="hint">
                                    "The script API ("<code>"Rapport.identify"</code>", "<code>"Rapport.tag"</code>
                                    ", "<code>"Rapport.open"</code>", …) and the Content Security Policy your pages need are in the README."
                                </p>
                                <h3>"Widget key"</h3>
                                <p>
                                    "The snippet names your workspace with this key. It is not a secret (it is in your pages), "
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
                            <IdentitySettings w=identity_view action=identity rotate=rotate_identity />
                        }.erase() }
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

/// Conversations: the default language, the default capacity, the business hours.
#[component]
fn EngineSettings(w: WorkspaceView, action: FormAction<UpdateEngineSettings>) -> impl IntoView {
    let problem = action_problem(action.value());
    let chosen = w.business_hours_id.clone().unwrap_or_default();
    let no_hours = w.opening_hours.is_empty();
    view! {
        <section class="card">
            <h2>"Conversations"</h2>
            <PostForm action attr:data-unsaved-guard="">
                <div class="field-row">
                    <div class="field">
                        <label for="workspace-language">"Default language"</label>
                        <input id="workspace-language" name="language" type="text" required=true maxlength="35"
                            value=w.language.clone() autocomplete="off" placeholder="en"
                            aria-invalid=field_invalid(problem, "language")
                            aria-describedby="workspace-language-hint workspace-language-error" />
                        <p class="hint" id="workspace-language-hint">
                            "A language tag such as en or de-CH. System messages go out in it when none exists in the customer's language."
                        </p>
                        <FieldMessage problem field="language" id="workspace-language-error" />
                    </div>
                    <div class="field">
                        <label for="workspace-max-chats">"Default capacity"</label>
                        <input id="workspace-max-chats" name="max_chats" type="number" required=true min="1" max="100" step="1"
                            value=w.max_chats.to_string() aria-invalid=field_invalid(problem, "maxChats")
                            aria-describedby="workspace-max-chats-hint workspace-max-chats-error" />
                        <p class="hint" id="workspace-max-chats-hint">
                            "Open conversations an agent is given at once (1–100), unless the user has a capacity of their own."
                        </p>
                        <FieldMessage problem field="maxChats" id="workspace-max-chats-error" />
                    </div>
                    <div class="field">
                        <label for="workspace-business-hours">"Business hours"</label>
                        <select id="workspace-business-hours" name="business_hours_id"
                            aria-invalid=field_invalid(problem, "businessHoursId")
                            aria-describedby="workspace-business-hours-hint workspace-business-hours-error">
                            <option value="" selected=chosen.is_empty()>"None: around the clock"</option>
                            {w.opening_hours
                                .iter()
                                .map(|(id, name)| view! { <option value=id.clone() selected=*id == chosen>{name.clone()}</option> })
                                .collect_view()}
                        </select>
                        <p class="hint" id="workspace-business-hours-hint">
                            "While these opening hours are closed, SLA clocks stop, the chat on your site shows its offline form and visitors cannot ask for a video call."
                            {no_hours.then(|| view! { " " <a href=format!("{OPENING_HOURS_PATH}/new")>"Create opening hours"</a> " first." })}
                        </p>
                        <FieldMessage problem field="businessHoursId" id="workspace-business-hours-error" />
                    </div>
                </div>
                <SettingCheckbox id="workspace-csat" name="csat" checked=w.csat_enabled
                    label="Ask visitors to rate closed conversations"
                    hint="Once a conversation is marked done, the chat asks for 1 to 5 stars and a comment. Ratings show in the inbox and the chat report." />
                <SettingCheckbox id="workspace-typing-preview" name="typing_preview" checked=w.typing_preview
                    label="Show agents what visitors type before they send it"
                    hint="The inbox shows the visitor's draft beside “typing…”. Off, agents see only that the visitor is typing. Drafts are never stored." />
                <div class="field">
                    <label for="workspace-reply-mail">"Mail replies to visitors who have left after (minutes)"</label>
                    <input id="workspace-reply-mail" name="reply_by_mail_minutes" type="number" min="0" max="1440" step="1"
                        value=w.reply_by_mail_minutes.to_string() aria-invalid=field_invalid(problem, "replyByMailMinutes")
                        aria-describedby="workspace-reply-mail-hint workspace-reply-mail-error" />
                    <p class="hint" id="workspace-reply-mail-hint">
                        "A reply the visitor has not seen by then goes to their e-mail address (or the one they left in the offline form), with a link that continues the chat. 0: never."
                    </p>
                    <FieldMessage problem field="replyByMailMinutes" id="workspace-reply-mail-error" />
                </div>
                <SettingCheckbox id="workspace-transcript" name="transcript" checked=w.transcript_on_close
                    label="Mail customers a transcript when a conversation is marked done"
                    hint="It goes to the customer's e-mail address, when they have one. Visitors can also ask for a transcript from the chat. Transcripts count toward the workspace's mails per day." />
                <button type="submit" class="button primary" disabled=move || action.pending().get()>"Save conversation settings"</button>
            </PostForm>
            <ActionError value=action.value() />
            <SavedNote value=action.value() />
        </section>
    }
}

/// Identity verification: the secret the website signs its signed-in visitors'
/// identities with, and whether unsigned identities are refused.
#[component]
fn IdentitySettings(
    w: WorkspaceView,
    action: FormAction<UpdateIdentity>,
    rotate: FormAction<RotateIdentitySecret>,
) -> impl IntoView {
    let secret = w.identity_secret.clone().map(|secret| {
        view! {
            <h3>"Identity secret"</h3>
            <p>
                "Keep it on your website's server. It computes, for a signed-in visitor, the lowercase hex "
                "HMAC-SHA256 of their customer id, a line feed and their e-mail, with this secret, and passes it as "
                <code>"identitySignature"</code>" to "<code>"Rapport('identify', …)"</code>"."
            </p>
            <CopyField label="identity secret" value=secret />
            <details>
                <summary>"Rotate the identity secret…"</summary>
                <p class="hint">"Signatures made with the old secret are refused at once."</p>
                <PostForm action=rotate>
                    <button type="submit" class="button danger">"Rotate now"</button>
                </PostForm>
            </details>
            <ActionError value=rotate.value() />
        }
    });
    view! {
        <section class="card">
            <h2>"Identity verification"</h2>
            <p>
                "Any page can tell the widget a visitor's e-mail or customer id. Unless your website signs it, "
                "agents see it marked as unverified, and it never joins the visitor to a customer you already have. "
                "Signed, the visitor continues their conversation on any device."
            </p>
            <PostForm action attr:data-unsaved-guard="">
                <SettingCheckbox id="identity-required" name="required" checked=w.identity_required
                    label="Refuse identities my website did not sign"
                    hint="Visitors who do not name themselves still chat. Turning this on makes a secret if there is none." />
                <button type="submit" class="button primary" disabled=move || action.pending().get()>"Save identity settings"</button>
            </PostForm>
            <ActionError value=action.value() />
            <SavedNote value=action.value() />
            {secret}
            {w.identity_secret.is_none().then(|| view! {
                <PostForm action=rotate>
                    <button type="submit" class="button secondary">"Make an identity secret"</button>
                </PostForm>
            })}
        </section>
    }
}

/// What the visitor script records: on or off, consent, masking, retention.
#[component]
fn RecordingSettings(r: RecordingView, action: FormAction<UpdateRecordingSettings>) -> impl IntoView {
    let problem = action_problem(action.value());
    view! {
        <section class="card">
            <h2>"Recording"</h2>
            <p>
                "The visitor script records what visitors see on your website, for replay and live view. "
                "Every input is always masked: the recording shows "<code>"*"</code>" for what visitors type."
            </p>
            <PostForm action attr:data-unsaved-guard="">
                <div class="field checkbox">
                    <input id="recording-enabled" name="enabled" type="checkbox" value="on" checked=r.enabled />
                    <label for="recording-enabled">"Record visitors' sessions"</label>
                </div>
                <div class="field checkbox">
                    <input id="recording-consent" name="require_consent" type="checkbox" value="on" checked=r.require_consent
                        aria-describedby="recording-consent-hint" />
                    <label for="recording-consent">"Only after the visitor consents"</label>
                    <p class="hint" id="recording-consent-hint">
                        "Your website then calls "<code>"Rapport('consent', true)"</code>" once the visitor agrees."
                    </p>
                </div>
                <div class="field-row">
                    <div class="field">
                        <label for="recording-mask">"Also mask the text of"</label>
                        <input id="recording-mask" name="mask_selector" type="text" maxlength="1000" value=r.mask_selector
                            placeholder=".price, #account" autocomplete="off"
                            aria-invalid=field_invalid(problem, "maskSelector")
                            aria-describedby="recording-mask-hint recording-mask-error" />
                        <p class="hint" id="recording-mask-hint">"A CSS selector. Elements with the class rapport-mask are masked too."</p>
                        <FieldMessage problem field="maskSelector" id="recording-mask-error" />
                    </div>
                    <div class="field">
                        <label for="recording-block">"Leave out"</label>
                        <input id="recording-block" name="block_selector" type="text" maxlength="1000" value=r.block_selector
                            placeholder="#payment-form" autocomplete="off"
                            aria-invalid=field_invalid(problem, "blockSelector")
                            aria-describedby="recording-block-hint recording-block-error" />
                        <p class="hint" id="recording-block-hint">"A CSS selector of elements replayed as empty boxes. The class rapport-block works too."</p>
                        <FieldMessage problem field="blockSelector" id="recording-block-error" />
                    </div>
                    <div class="field">
                        <label for="recording-retention">"Keep recordings for (days)"</label>
                        <input id="recording-retention" name="retention_days" type="number" required=true min="1" max="365" step="1"
                            value=r.retention_days.to_string() aria-invalid=field_invalid(problem, "retentionDays")
                            aria-describedby="recording-retention-error" />
                        <FieldMessage problem field="retentionDays" id="recording-retention-error" />
                    </div>
                    <div class="field">
                        <label for="recording-conference-retention">"Keep video call recordings for (days)"</label>
                        <input id="recording-conference-retention" name="conference_retention_days" type="number" required=true
                            min="1" max="3650" step="1" value=r.conference_retention_days.to_string()
                            aria-invalid=field_invalid(problem, "conferenceRetentionDays")
                            aria-describedby="recording-conference-retention-hint recording-conference-retention-error" />
                        <p class="hint" id="recording-conference-retention-hint">"Appointments with recording on store each participant's video and sound."</p>
                        <FieldMessage problem field="conferenceRetentionDays" id="recording-conference-retention-error" />
                    </div>
                </div>
                <button type="submit" class="button primary" disabled=move || action.pending().get()>"Save recording settings"</button>
            </PostForm>
            <ActionError value=action.value() />
            <SavedNote value=action.value() />
        </section>
    }
}
