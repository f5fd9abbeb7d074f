//! Settings → Watchdogs (admins): `/settings/watchdogs` lists and adds them;
//! `/settings/watchdogs/{id}` edits or deletes one. A watchdog names what it
//! watches and who hears about it: e-mail addresses, users of the tenant (picked
//! from a list of suggestions), or webhook URLs.
//!
//! Receivers are rows of a kind and a value. The form always offers two empty
//! rows, so it works without JavaScript (save, and two more appear); once the
//! page is live, "Add a receiver" adds rows in place.
//!
//! The list page also says how alerts go out (`engine::watchdogs` and
//! `engine::alerts` in the core): the grouping period, which admins choose; the
//! alert secret that signs alerts to webhook URLs (shown on request, with
//! `?secret=show`, and rotated); and each receiver URL's state, with a way to
//! enable one that Rapport stopped sending to.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::{
        alerts::{
            alert_secret, alert_settings, AlertSettingsView, EnableAlertReceiver, RotateAlertSecret, SetAlertWindow,
            WINDOW_MINUTES,
        },
        problem::Problem,
        teams::{team_candidates, Member},
        watchdogs::{
            get_watchdog, list_watchdogs, watchdog_type_label, AddWatchdog, EditWatchdog, ReceiverView, RemoveWatchdog,
            WatchdogView, RECEIVER_TYPES, WATCHDOGS_PATH, WATCHDOG_TYPES,
        },
    },
    components::{
        copy::CopyField,
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, reset_on_success, successes, ActionError, ErrorNote, FieldMessage},
        layout::{admins, utc_time, Guard},
    },
};

type People = Resource<Result<Vec<Member>, ServerFnError>>;

/// Empty receiver rows a form offers.
const SPARE_ROWS: usize = 2;

/// `/settings/watchdogs`.
#[component]
pub fn WatchdogsPage() -> impl IntoView {
    let add = FormAction::<AddWatchdog>::new();
    let watchdogs = Resource::new(move || add.version().get(), |_| list_watchdogs());
    let people: People = Resource::new(|| (), |_| team_candidates());
    let form = NodeRef::new();
    reset_on_success(add.value(), form);
    let alerts = AlertActions {
        window: FormAction::<SetAlertWindow>::new(),
        rotate: FormAction::<RotateAlertSecret>::new(),
        enable: FormAction::<EnableAlertReceiver>::new(),
    };
    let settings = Resource::new(
        move || (alerts.window.version().get(), alerts.enable.version().get()),
        |_| alert_settings(),
    );
    let query = use_query_map();
    let show_secret = move || query.with(|q| q.get("secret").as_deref() == Some("show"));
    // Shown on request, and again after a rotation (the new one).
    let secret = Resource::new(
        move || (show_secret(), alerts.rotate.version().get()),
        |(show, rotations)| async move {
            if show || rotations > 0 {
                alert_secret().await.map(Some)
            } else {
                Ok(None)
            }
        },
    );
    view! {
        <Title text="Watchdogs" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Watchdogs"</h1>
            <p class="lead">"Alerts for things worth knowing at once: a script error on your site, a customer message, an assignment, a visitor's form, a changed setting. They go by e-mail, to users (the bell at the top of every page), or to a webhook URL."</p>
            <section class="card">
                <h2>"Watchdogs"</h2>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading watchdogs…"</p> }>
                    {move || Suspend::new(async move {
                        let people = people.await.unwrap_or_default();
                        match watchdogs.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">"No watchdog yet. Add one below."</p>
                            }.erase(),
                            Ok(list) => view! { <WatchdogTable list people /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
            <section class="card">
                <h2>"Add a watchdog"</h2>
                <PostForm action=add node_ref=form attr:data-unsaved-guard="">
                    <WatchdogFields watchdog=None problem=action_problem(add.value()) people />
                    <button type="submit" class="button primary" disabled=move || add.pending().get()>"Add watchdog"</button>
                </PostForm>
                <ActionError value=add.value() />
                {move || add.value().get().and_then(Result::ok).map(|w| view! {
                    <p class="note ok" role="status">
                        "Watchdog " <a href=format!("{WATCHDOGS_PATH}/{}", w.id)>{w.name.clone()}</a> " added."
                    </p>
                })}
            </section>
            <section class="card">
                <h2>"How alerts are sent"</h2>
                <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
                    {move || Suspend::new(async move {
                        let shown = secret.await;
                        match settings.await {
                            Ok(current) => view! { <AlertSettings current secret=shown alerts /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Transition>
            </section>
        </Guard>
    }
}

/// The forms of the alert settings card.
#[derive(Clone, Copy)]
struct AlertActions {
    window: FormAction<SetAlertWindow>,
    rotate: FormAction<RotateAlertSecret>,
    enable: FormAction<EnableAlertReceiver>,
}

/// The grouping period, the alert secret and the receiver URLs.
#[component]
fn AlertSettings(
    current: AlertSettingsView,
    secret: Result<Option<String>, ServerFnError>,
    alerts: AlertActions,
) -> impl IntoView {
    let minutes = (current.window_seconds / 60).max(1);
    let mut choices: Vec<i64> = WINDOW_MINUTES.to_vec();
    if !choices.contains(&minutes) {
        choices.push(minutes);
        choices.sort_unstable();
    }
    let problem = action_problem(alerts.window.value());
    let shown = match secret {
        Ok(Some(s)) => view! { <CopyField label="Alert secret" value=s /> }.erase(),
        Ok(None) => view! {
            <p><a href=format!("{WATCHDOGS_PATH}?secret=show")>"Show the alert secret"</a></p>
        }
        .erase(),
        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
    };
    view! {
        <p>
            "Alerts are grouped per watchdog and period: the first event of a period is sent at once; "
            "what follows within it is counted and sent as one summary when the period ends. "
            "A storm of a thousand script errors brings each receiver two alerts per period, not a thousand."
        </p>
        <PostForm action=alerts.window attr:class="field-row">
            <div class="field">
                <label for="alert-window">"Period"</label>
                <select id="alert-window" name="minutes" aria-invalid=field_invalid(problem, "minutes")
                    aria-describedby="alert-window-error">
                    {choices.into_iter().map(|m| view! {
                        <option value=m.to_string() selected=m == minutes>
                            {if m == 1 { "1 minute".to_string() } else { format!("{m} minutes") }}
                        </option>
                    }).collect_view()}
                </select>
                <FieldMessage problem field="minutes" id="alert-window-error" />
            </div>
            <button type="submit" class="button secondary" disabled=move || alerts.window.pending().get()>"Save the period"</button>
        </PostForm>
        <h3>"Webhook receivers"</h3>
        <p>
            "Alerts to a webhook URL are POSTed as " <code>"watchdog.alert"</code> " (and SLA misses as "
            <code>"sla.missed"</code> ") events, signed per Standard Webhooks with this workspace's alert secret, "
            "and retried like any webhook delivery."
        </p>
        {shown}
        <PostForm action=alerts.rotate>
            <button type="submit" class="button secondary" disabled=move || alerts.rotate.pending().get()>"Rotate the alert secret"</button>
            <span class="hint">" The previous secret keeps signing beside the new one for 24 hours."</span>
        </PostForm>
        <ActionError value=alerts.rotate.value() />
        {if current.receivers.is_empty() {
            view! { <p class="empty">"No webhook receiver has had an alert yet."</p> }.erase()
        } else {
            view! {
                <ul class="receiver-states">
                    {current.receivers.into_iter().map(|r| {
                        let state = match (&r.disabled_reason, &r.failing_since) {
                            _ if !r.enabled => format!(
                                "stopped: {}",
                                r.disabled_reason.clone().unwrap_or_else(|| "disabled".into())
                            ),
                            (_, Some(since)) => format!("failing since {}", utc_time(since, false)),
                            _ => "working".to_string(),
                        };
                        let url = r.url.clone();
                        view! {
                            <li>
                                <code>{r.url.clone()}</code> " — " {state}
                                {(!r.enabled).then(|| view! {
                                    <PostForm action=alerts.enable>
                                        <input type="hidden" name="url" value=url />
                                        <button type="submit" class="button secondary small">"Send alerts again"</button>
                                    </PostForm>
                                })}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            }.erase()
        }}
        <ActionError value=alerts.enable.value() />
    }
}

/// A receiver in words: the user's name for a user id.
fn receiver_text(r: &ReceiverView, people: &[Member]) -> String {
    match r.kind.as_str() {
        "USER" => people
            .iter()
            .find(|(id, ..)| *id == r.value)
            .map(|(_, name, email)| if name.is_empty() { email.clone() } else { name.clone() })
            .unwrap_or_else(|| r.value.clone()),
        _ => r.value.clone(),
    }
}

#[component]
fn WatchdogTable(list: Vec<WatchdogView>, people: Vec<Member>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Watchdogs"</caption>
                <thead>
                    <tr><th scope="col">"Name"</th><th scope="col">"Watches"</th><th scope="col">"Receivers"</th></tr>
                </thead>
                <tbody>
                    {list.into_iter().map(|w| {
                        let receivers: Vec<String> = w.receivers.iter().map(|r| receiver_text(r, &people)).collect();
                        view! {
                            <tr>
                                <td><a href=format!("{WATCHDOGS_PATH}/{}", w.id)>{w.name.clone()}</a></td>
                                <td>{watchdog_type_label(&w.watchdog_type).to_string()}</td>
                                <td>{if receivers.is_empty() { "Nobody yet".to_string() } else { receivers.join(", ") }}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// Name, kind and receiver rows, shared by the add and edit forms.
#[component]
fn WatchdogFields(watchdog: Option<WatchdogView>, problem: Signal<Option<Problem>>, people: People) -> impl IntoView {
    let prefix = if watchdog.is_some() { "edit" } else { "new" };
    let id = move |name: &str| format!("{prefix}-watchdog-{name}");
    let (name, kind, receivers) = watchdog
        .map(|w| (w.name, w.watchdog_type, w.receivers))
        .unwrap_or_default();
    let rows = RwSignal::new(receivers.len() + SPARE_ROWS);
    let receivers = StoredValue::new(receivers);
    // The "add a row" button needs the page to be live; it stays hidden before.
    let live = RwSignal::new(false);
    Effect::new(move |_| live.set(true));
    let users_list = format!("{prefix}-watchdog-users");
    view! {
        <div class="field-row">
            <div class="field">
                <label for=id("name")>"Name"</label>
                <input id=id("name") name="name" type="text" required=true maxlength="200" value=name autocomplete="off"
                    aria-invalid=field_invalid(problem, "name") aria-describedby=id("name-error") />
                <FieldMessage problem field="name" id=id("name-error") />
            </div>
            <div class="field">
                <label for=id("type")>"Watches"</label>
                <select id=id("type") name="watchdog_type" required=true
                    aria-invalid=field_invalid(problem, "watchdogType") aria-describedby=id("type-error")>
                    <option value="" selected=kind.is_empty()>"Choose…"</option>
                    {WATCHDOG_TYPES.iter().map(|(value, label)| view! {
                        <option value=*value selected=kind == *value>{*label}</option>
                    }).collect_view()}
                </select>
                <FieldMessage problem field="watchdogType" id=id("type-error") />
            </div>
        </div>
        <fieldset class="receivers">
            <legend>"Receivers"</legend>
            <p class="hint">"For a user, type their name or e-mail and pick them from the suggestions. Leave a row empty to skip it."</p>
            <datalist id=users_list.clone()>
                <Suspense>
                    {move || Suspend::new(async move {
                        people.await.unwrap_or_default().into_iter().map(|(uid, name, email)| view! {
                            <option value=uid>{if name.is_empty() { email } else { format!("{name} · {email}") }}</option>
                        }).collect_view()
                    })}
                </Suspense>
            </datalist>
            <ol class="receiver-rows">
                {move || (0..rows.get()).map(|row| {
                    let current = receivers.with_value(|r| r.get(row).cloned());
                    let (kind, value) = current.map(|r| (r.kind, r.value)).unwrap_or_else(|| ("EMAIL".into(), String::new()));
                    let field = format!("receivers[{row}]");
                    let row_id = move |part: &str| format!("{prefix}-receiver-{row}-{part}");
                    // Suggestions and the example follow the row's kind.
                    let chosen = RwSignal::new(kind.clone());
                    let users_list = users_list.clone();
                    let list = move || (chosen.get() == "USER").then(|| users_list.clone());
                    let placeholder = move || match chosen.get().as_str() {
                        "USER" => "Name or e-mail of a user",
                        "WEBHOOK" => "https://hooks.example.com/alerts",
                        _ => "ops@example.com",
                    };
                    view! {
                        <li class="field-row">
                            <div class="field">
                                <label for=row_id("type")>{format!("Receiver {} kind", row + 1)}</label>
                                <select id=row_id("type") name="receiver_type[]"
                                    on:change=move |ev| chosen.set(event_target_value(&ev))>
                                    {RECEIVER_TYPES.iter().map(|(v, label)| view! {
                                        <option value=*v selected=kind == *v>{*label}</option>
                                    }).collect_view()}
                                </select>
                            </div>
                            <div class="field grow">
                                <label for=row_id("value")>{format!("Receiver {}", row + 1)}</label>
                                <input id=row_id("value") name="receiver_value[]" type="text" value=value maxlength="2000"
                                    list=list autocomplete="off" placeholder=placeholder
                                    aria-invalid=field_invalid(problem, field.clone()) aria-describedby=row_id("error") />
                                <FieldMessage problem field=field id=row_id("error") />
                            </div>
                        </li>
                    }
                }).collect_view()}
            </ol>
            <button type="button" class="button secondary" hidden=move || !live.get()
                on:click=move |_| rows.update(|n| *n += 1)>"Add a receiver"</button>
            <FieldMessage problem field="receivers" id=id("receivers-error") />
        </fieldset>
    }
}

/// `/settings/watchdogs/{id}`.
#[component]
pub fn WatchdogPage() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditWatchdog>::new();
    let remove = FormAction::<RemoveWatchdog>::new();
    let edit_saved = successes(edit.value());
    let watchdog = Resource::new(move || (id(), edit_saved.get()), |(id, _)| get_watchdog(id));
    let people: People = Resource::new(|| (), |_| team_candidates());
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: WATCHDOGS_PATH,
        crumb: "Settings › Watchdogs".into(),
        text: "Back to the watchdogs".into(),
    };
    let render = move |w: WatchdogView| {
        let (edit_id, remove_id) = (w.id.clone(), w.id.clone());
        view! {
            <h1>{w.name.clone()}</h1>
            <EditCard title="Watchdog" action=edit id=edit_id>
                <WatchdogFields watchdog=Some(w.clone()) problem people />
            </EditCard>
            <DeleteCard title="Delete the watchdog" summary="Delete this watchdog…"
                consequence="Its receivers stop hearing about these events. This cannot be undone."
                action=remove id=remove_id />
        }
    };
    view! {
        <Title text="Watchdog" />
        <DetailFrame title="Watchdog" allowed=admins back loading="Loading the watchdog…" load=move || watchdog render />
    }
}
