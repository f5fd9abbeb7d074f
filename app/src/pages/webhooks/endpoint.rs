//! `/settings/webhooks/{id}`: one endpoint's settings, its signing secret, a
//! test event, and its delivery log, where any delivery can be replayed.

use leptos::prelude::*;
use leptos_meta::Title;

use super::{EventTypes, StatusBadge, WebhookFields};
use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::webhooks::{
        get_webhook, take_webhook_secret, webhook_attempts, webhook_event_types, AttemptView, DeleteWebhook,
        ReplayWebhookDelivery, RotateWebhookSecret, SendTestWebhook, UpdateWebhook, WebhookView, WEBHOOKS_PATH,
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame},
        feedback::{action_problem, successes, ActionError, ErrorNote},
        layout::{admins, utc_time},
        route::use_path_param,
        secret::OneTimeSecret,
    },
};

/// `/settings/webhooks/{id}`.
#[component]
pub fn WebhookPage() -> impl IntoView {
    view! {
        <Title text="Webhook endpoint" />
        <WebhookDetail />
    }
}

#[component]
fn WebhookDetail() -> impl IntoView {
    let id = use_path_param("id");
    let update = FormAction::<UpdateWebhook>::new();
    let rotate = FormAction::<RotateWebhookSecret>::new();
    let update_saved = successes(update.value());
    let hook = Resource::new(
        move || (id(), update_saved.get(), rotate.version().get()),
        |(id, _, _)| get_webhook(id),
    );
    let flashed = Resource::new(id, |id| take_webhook_secret(Some(id)));
    let types: EventTypes = Resource::new(|| (), |_| webhook_event_types());
    let deliveries = Deliveries::new(id);
    let back = BackTo {
        path: WEBHOOKS_PATH,
        crumb: "Settings › Webhooks".into(),
        text: "Back to the endpoints".into(),
    };
    let render = move |h: WebhookView| {
        view! {
            <h1>"Endpoint " <code>{h.url.clone()}</code></h1>
            <p><StatusBadge hook=h.clone() /></p>
            <EditForm hook=h.clone() update types />
            <SecretCard hook=h.clone() rotate />
        }
    };
    // Its resources are created above, outside the guard's `Suspense` (see `Guard`).
    view! {
        <DetailFrame title="Endpoint" allowed=admins back loading="Loading the endpoint…" load=move || hook render>
            <Suspense>
                {move || Suspend::new(async move {
                    flashed.await.ok().flatten().map(|s| view! {
                        <section class="card"><OneTimeSecret label="New signing secret" value=s.secret /></section>
                    })
                })}
            </Suspense>
            // Outside the endpoint's Suspense: the log has a resource of its own.
            <DeliveryLog id=id() log=deliveries />
            <DeleteEndpoint id=id() />
        </DetailFrame>
    }
}

#[component]
fn EditForm(hook: WebhookView, update: FormAction<UpdateWebhook>, types: EventTypes) -> impl IntoView {
    let problem = action_problem(update.value());
    let saved = move || matches!(update.value().get(), Some(Ok(_)));
    view! {
        <section class="card">
            <h2>"Settings"</h2>
            <PostForm action=update attr:data-unsaved-guard="">
                <input type="hidden" name="id" value=hook.id.clone() />
                <WebhookFields id_prefix="edit" hook=Some(hook.clone()) types problem />
                <label class="checkbox">
                    <input type="checkbox" name="enabled" value="on" checked=hook.enabled />
                    "Deliver events to this endpoint"
                </label>
                <button type="submit" class="button primary" disabled=move || update.pending().get()>
                    {move || if update.pending().get() { "Saving…" } else { "Save changes" }}
                </button>
            </PostForm>
            <ActionError value=update.value() />
            {move || saved().then(|| view! { <p class="note ok" role="status">"Saved."</p> })}
        </section>
    }
}

#[component]
fn SecretCard(hook: WebhookView, rotate: FormAction<RotateWebhookSecret>) -> impl IntoView {
    view! {
        <section class="card">
            <h2>"Signing secret"</h2>
            <p>
                "The secret was shown once, when the endpoint was added. Rotate it to get a new one; "
                "the old secret keeps signing alongside it for the overlap you choose, so receivers can switch without losing events."
            </p>
            {hook.previous_secret_expires_at.map(|until| view! {
                <p class="note">{format!("The previous secret also signs until {}.", utc_time(&until, true))}</p>
            })}
            <PostForm action=rotate>
                <input type="hidden" name="id" value=hook.id.clone() />
                <div class="field-row">
                    <div class="field">
                        <label for="rotate-overlap">"Keep the old secret signing for"</label>
                        <select id="rotate-overlap" name="overlap_seconds">
                            <option value="0">"No overlap"</option>
                            <option value="3600">"1 hour"</option>
                            <option value="86400" selected=true>"24 hours"</option>
                            <option value="604800">"7 days"</option>
                        </select>
                    </div>
                    <button type="submit" class="button secondary" disabled=move || rotate.pending().get()>"Rotate secret"</button>
                </div>
            </PostForm>
            <ActionError value=rotate.value() />
            {move || rotate.value().get().and_then(Result::ok).map(|s| view! {
                <OneTimeSecret label="New signing secret" value=s.secret />
            })}
        </section>
    }
}

/// The delivery log's actions and data. Created by the page component, outside
/// the guard's `Suspense` (see `Guard`).
#[derive(Clone, Copy)]
struct Deliveries {
    test: FormAction<SendTestWebhook>,
    replay: FormAction<ReplayWebhookDelivery>,
    /// Bumped to read the log again.
    refresh: RwSignal<u32>,
    attempts: Resource<Result<Vec<AttemptView>, ServerFnError>>,
}

impl Deliveries {
    fn new(id: impl Fn() -> String + Send + Sync + 'static) -> Self {
        let test = FormAction::<SendTestWebhook>::new();
        let replay = FormAction::<ReplayWebhookDelivery>::new();
        let refresh = RwSignal::new(0u32);
        let attempts = Resource::new(
            move || (id(), test.version().get(), replay.version().get(), refresh.get()),
            |(id, ..)| webhook_attempts(id),
        );
        Deliveries {
            test,
            replay,
            refresh,
            attempts,
        }
    }
}

#[component]
fn DeliveryLog(id: String, log: Deliveries) -> impl IntoView {
    let Deliveries {
        test,
        replay,
        refresh,
        attempts,
    } = log;
    // Deliveries go out in the background: while the page is open, the log
    // follows them.
    #[cfg(feature = "hydrate")]
    {
        if let Ok(handle) = set_interval_with_handle(
            move || refresh.update(|n| *n = n.wrapping_add(1)),
            std::time::Duration::from_secs(3),
        ) {
            on_cleanup(move || handle.clear());
        }
    }
    let sent = move || test.value().get().and_then(Result::ok);
    let endpoint = StoredValue::new(id.clone());
    view! {
        <section class="card">
            <h2>"Deliveries"</h2>
            <div class="toolbar">
                <PostForm action=test>
                    <input type="hidden" name="id" value=id />
                    <button type="submit" class="button secondary" disabled=move || test.pending().get()>"Send test event"</button>
                </PostForm>
                <a class="button secondary" href=format!("{WEBHOOKS_PATH}/{}", endpoint.get_value())
                    on:click=move |ev| { ev.prevent_default(); refresh.update(|n| *n += 1); }>"Refresh"</a>
            </div>
            <ActionError value=test.value() />
            <ActionError value=replay.value() />
            {move || sent().map(|event| view! {
                <p class="note ok" role="status">"Test event " <code>{event}</code> " queued; it appears below once delivered."</p>
            })}
            {move || matches!(replay.value().get(), Some(Ok(_))).then(|| view! {
                <p class="note ok" role="status">"Replay queued with the original webhook-id."</p>
            })}
            <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading deliveries…"</p> }>
                {move || Suspend::new(async move {
                    match attempts.await {
                        Ok(list) if list.is_empty() => view! {
                            <p class="empty">"Nothing delivered yet. Send a test event to try the endpoint."</p>
                        }.erase(),
                        Ok(list) => view! { <AttemptTable endpoint=endpoint.get_value() attempts=list replay /> }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn AttemptTable(
    endpoint: String,
    attempts: Vec<AttemptView>,
    replay: FormAction<ReplayWebhookDelivery>,
) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Delivery attempts, newest first"</caption>
                <thead>
                    <tr>
                        <th scope="col">"When"</th>
                        <th scope="col">"Event"</th>
                        <th scope="col">"Try"</th>
                        <th scope="col">"Result"</th>
                        <th scope="col" class="num">"Latency"</th>
                        <th scope="col"><span class="visually-hidden">"Actions"</span></th>
                    </tr>
                </thead>
                <tbody>
                    {attempts
                        .into_iter()
                        .map(|a| {
                            let endpoint = endpoint.clone();
                            let ok = a.status_code.is_some_and(|s| (200..300).contains(&s));
                            let result = match (a.status_code, a.error.clone()) {
                                (Some(code), _) => format!("HTTP {code}"),
                                (None, Some(error)) => error,
                                (None, None) => "no answer".into(),
                            };
                            let label = format!("Replay {} ({})", a.event_type, a.event_id);
                            view! {
                                <tr>
                                    <td>{utc_time(&a.at, true)}</td>
                                    <td><code>{a.event_type.clone()}</code><br /><small>{a.event_id.clone()}</small></td>
                                    <td>{a.attempt}</td>
                                    <td>
                                        <span class=if ok { "badge ok" } else { "badge danger" }>{result}</span>
                                        {a.response_excerpt.clone().filter(|r| !r.is_empty()).map(|r| view! {
                                            <details><summary>"Response"</summary><pre>{r}</pre></details>
                                        })}
                                    </td>
                                    <td class="num">{format!("{} ms", a.duration_ms)}</td>
                                    <td>
                                        <PostForm action=replay>
                                            <input type="hidden" name="id" value=endpoint.clone() />
                                            <input type="hidden" name="delivery_id" value=a.delivery_id.clone() />
                                            <button type="submit" class="button small secondary" aria-label=label>"Replay"</button>
                                        </PostForm>
                                    </td>
                                </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

#[component]
fn DeleteEndpoint(id: String) -> impl IntoView {
    let delete = FormAction::<DeleteWebhook>::new();
    view! {
        <DeleteCard title="Delete the endpoint" summary="Delete this endpoint…"
            consequence="Pending deliveries are dropped and the delivery log is deleted with it. This cannot be undone."
            action=delete id=id />
    }
}
