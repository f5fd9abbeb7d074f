//! Settings → Webhooks (admins): `/settings/webhooks` subscribes endpoints and
//! lists them; `/settings/webhooks/{id}` ([`endpoint`]) edits one, rotates its
//! secret, sends a test event and shows its delivery log, where any delivery
//! can be replayed. The two are areas of their own (`crate::routes`): the list
//! never needs the endpoint page's code. Every form is a plain server-function
//! form, so it also works without JavaScript.

pub mod endpoint;

use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        problem::Problem,
        webhooks::{
            list_webhooks, take_webhook_secret, webhook_event_types, CreateWebhook, WebhookSecretView, WebhookView,
            WEBHOOKS_PATH,
        },
    },
    components::{
        feedback::{action_problem, field_invalid, reset_on_success, ActionError, ErrorNote, FieldMessage},
        layout::{admins, utc_time, Guard},
        secret::OneTimeSecret,
    },
};

/// `/settings/webhooks`.
#[component]
pub fn WebhooksPage() -> impl IntoView {
    view! {
        <Title text="Webhooks" />
        <WebhookList />
    }
}

#[component]
fn WebhookList() -> impl IntoView {
    let create = FormAction::<CreateWebhook>::new();
    let hooks = Resource::new(move || create.version().get(), |_| list_webhooks());
    let types: EventTypes = Resource::new(|| (), |_| webhook_event_types());
    let flashed = Resource::new(|| (), |_| take_webhook_secret(None));
    let problem = action_problem(create.value());
    let form = NodeRef::new();
    reset_on_success(create.value(), form);
    // Its resources are created above, outside the guard's `Suspense` (see `Guard`).
    view! {
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Webhooks"</h1>
            <p class="lead">
                "Rapport posts each event to your endpoints, signed as Standard Webhooks "
                "(" <code>"webhook-id"</code> ", " <code>"webhook-timestamp"</code> ", "
                <code>"webhook-signature"</code> "), and retries failures with backoff."
            </p>
            <section class="card">
                <h2>"Add an endpoint"</h2>
                <PostForm action=create node_ref=form>
                    <WebhookFields id_prefix="webhook" hook=None types problem />
                    <button type="submit" class="button primary" disabled=move || create.pending().get()>
                        {move || if create.pending().get() { "Adding…" } else { "Add endpoint" }}
                    </button>
                </PostForm>
                <ActionError value=create.value() />
                {move || create.value().get().and_then(Result::ok).map(|s| view! { <NewSecret created=s /> })}
                <Suspense>
                    {move || Suspend::new(async move {
                        flashed.await.ok().flatten().map(|s| view! { <NewSecret created=s /> })
                    })}
                </Suspense>
            </section>
            <section class="card">
                <h2>"Endpoints"</h2>
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading endpoints…"</p> }>
                    {move || Suspend::new(async move {
                        match hooks.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">"No endpoints yet. Add one above to receive events."</p>
                            }.erase(),
                            Ok(list) => view! { <EndpointTable hooks=list /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

/// The fields the add and edit forms share: the endpoint's URL, its
/// description and the events it receives, empty for a new endpoint.
#[component]
fn WebhookFields(
    /// Makes the fields' ids unique on the page (`<prefix>-url`).
    id_prefix: &'static str,
    /// The endpoint being edited; none when adding one.
    hook: Option<WebhookView>,
    types: EventTypes,
    problem: Signal<Option<Problem>>,
) -> impl IntoView {
    let (url, description, selected) = hook.map_or_else(Default::default, |h| {
        (h.url, h.description.unwrap_or_default(), h.event_types)
    });
    let id = move |name: &str| format!("{id_prefix}-{name}");
    view! {
        <div class="field-row">
            <div class="field">
                <label for=id("url")>"Endpoint URL"</label>
                <input id=id("url") name="url" type="url" required=true maxlength="2048" value=url
                    placeholder="https://example.com/rapport" autocomplete="off"
                    aria-invalid=field_invalid(problem, "url") aria-describedby=id("url-error") />
                <FieldMessage problem field="url" id=id("url-error") />
            </div>
            <div class="field">
                <label for=id("description")>"Description (optional)"</label>
                <input id=id("description") name="description" type="text" maxlength="500" value=description
                    autocomplete="off" aria-invalid=field_invalid(problem, "description")
                    aria-describedby=id("description-error") />
                <FieldMessage problem field="description" id=id("description-error") />
            </div>
        </div>
        <EventPicker types selected problem />
    }
}

#[component]
fn NewSecret(created: WebhookSecretView) -> impl IntoView {
    view! {
        <OneTimeSecret label=format!("Signing secret of {}", created.webhook.url) value=created.secret />
        <p><a href=format!("{WEBHOOKS_PATH}/{}", created.webhook.id)>"Open the endpoint and send a test event"</a></p>
    }
}

fn events_summary(types: &[String]) -> String {
    match types.len() {
        0 => "All events".into(),
        1..=3 => types.join(", "),
        n => format!("{n} event types"),
    }
}

#[component]
fn StatusBadge(hook: WebhookView) -> impl IntoView {
    if !hook.enabled {
        let why = hook.disabled_reason.unwrap_or_else(|| "disabled by an admin".into());
        view! { <span class="badge muted" title=why.clone()>"Disabled"</span> " " <small>{why}</small> }.erase()
    } else if let Some(since) = hook.failing_since {
        view! { <span class="badge warn">"Failing"</span> " " <small>{format!("since {}", utc_time(&since, true))}</small> }
            .erase()
    } else {
        view! { <span class="badge ok">"Active"</span> }.erase()
    }
}

#[component]
fn EndpointTable(hooks: Vec<WebhookView>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <thead>
                    <tr>
                        <th scope="col">"Endpoint"</th>
                        <th scope="col">"Events"</th>
                        <th scope="col">"Status"</th>
                    </tr>
                </thead>
                <tbody>
                    {hooks
                        .into_iter()
                        .map(|h| {
                            let href = format!("{WEBHOOKS_PATH}/{}", h.id);
                            view! {
                                <tr>
                                    <td>
                                        <a href=href><code>{h.url.clone()}</code></a>
                                        {h.description.clone().map(|d| view! { <br /><small>{d}</small> })}
                                    </td>
                                    <td>{events_summary(&h.event_types)}</td>
                                    <td><StatusBadge hook=h /></td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// The subscribable event types, with what each means.
type EventTypes = Resource<Result<Vec<(String, String)>, ServerFnError>>;

/// Checkboxes for the event types; none ticked means every event. The page
/// creates `types` outside any `Suspense`, so that hydration sees resources in
/// the order the server created them.
#[component]
fn EventPicker(types: EventTypes, selected: Vec<String>, problem: Signal<Option<Problem>>) -> impl IntoView {
    let selected = StoredValue::new(selected);
    view! {
        <fieldset class="checkbox-grid" aria-describedby="webhook-events-hint webhook-events-error">
            <legend>"Events"</legend>
            <p class="hint" id="webhook-events-hint">"Tick none to receive every event, including types added later."</p>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading event types…"</p> }>
                {move || Suspend::new(async move {
                    match types.await {
                        Ok(types) => types
                            .into_iter()
                            .map(|(name, what)| {
                                let checked = selected.with_value(|s| s.contains(&name));
                                view! {
                                    <label class="checkbox" title=what>
                                        <input type="checkbox" name="event_types[]" value=name.clone() checked=checked />
                                        <code>{name.clone()}</code>
                                    </label>
                                }
                            })
                            .collect_view()
                            .erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
            <FieldMessage problem field="eventTypes" id="webhook-events-error" />
        </fieldset>
    }
}
