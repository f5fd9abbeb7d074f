//! Appointments (agents and up): `/appointments` is a week or month calendar in
//! the tenant's zone, where every hour (week) or day (month) links to a new
//! appointment starting then; `/appointments/new` creates one, and
//! `/appointments/{id}` shows its join link (with a copy button and when it
//! works), switches recording, sends invitations, edits and deletes it.

use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_query_map;

use crate::components::post_form::{FormAction, PostForm};
use crate::components::route::use_path_param;
use crate::erase::EraseView;
use crate::{
    api::{
        appointments::{
            appointment_calendar, appointment_owners, appointment_recordings, get_appointment, AddAppointment,
            AppointmentView, Calendar, CallRecordingView, EditAppointment, OwnerChoices, RemoveAppointment,
            SendAppointmentInvitations, SetAppointmentRecording, APPOINTMENTS_PATH,
        },
        problem::Problem,
    },
    components::{
        copy::CopyField,
        detail::{BackTo, DeleteCard, DetailFrame, EditCard},
        feedback::{action_problem, field_invalid, successes, ActionError, ErrorNote, FieldMessage},
        layout::{agents, encode_query, Guard},
        zones::{load_zone_names, ZoneNames, ZonesResource},
    },
};

/// Hours the week view has rows for; earlier and later appointments join the
/// first and last row.
const FIRST_HOUR: u32 = 7;
const LAST_HOUR: u32 = 20;

fn calendar_href(view: &str, date: &str) -> String {
    format!("{APPOINTMENTS_PATH}?view={view}&date={}", encode_query(date))
}

fn new_href(date: &str, hour: u32) -> String {
    format!(
        "{APPOINTMENTS_PATH}/new?start={}",
        encode_query(&format!("{date}T{hour:02}:00"))
    )
}

/// `/appointments`.
#[component]
pub fn AppointmentsPage() -> impl IntoView {
    let query = use_query_map();
    let view = move || query.with(|q| q.get("view")).unwrap_or_else(|| "week".into());
    let date = move || query.with(|q| q.get("date"));
    let calendar = Resource::new(
        move || (view(), date()),
        |(view, date)| appointment_calendar(Some(view), date),
    );
    view! {
        <Title text="Appointments" />
        <Guard allowed=agents>
            <h1>"Appointments"</h1>
            <p class="lead">"Video meetings with customers. Pick a free hour to schedule one; each gets a join link to share."</p>
            <Transition fallback=|| view! { <p class="loading" aria-busy="true">"Loading the calendar…"</p> }>
                {move || Suspend::new(async move {
                    match calendar.await {
                        Ok(calendar) => view! { <CalendarView calendar /> }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Transition>
        </Guard>
    }
}

#[component]
fn CalendarView(calendar: Calendar) -> impl IntoView {
    let month = calendar.view == "month";
    let view = calendar.view.clone();
    let (week_href, month_href) = (
        calendar_href("week", &calendar.prev),
        calendar_href("month", &calendar.today),
    );
    // Switching view keeps the period in sight: a month opens at its first
    // week, a week opens its month.
    let week_href = if month {
        calendar_href("week", &calendar.days[7.min(calendar.days.len() - 1)].date)
    } else {
        week_href
    };
    let month_href = if month {
        month_href
    } else {
        calendar_href("month", &calendar.days[0].date)
    };
    view! {
        <div class="calendar-bar">
            <nav class="calendar-nav" aria-label="Periods">
                <a href=calendar_href(&view, &calendar.prev) rel="prev">{if month { "‹ Previous month" } else { "‹ Previous week" }}</a>
                <a href=calendar_href(&view, &calendar.today)>"Today"</a>
                <a href=calendar_href(&view, &calendar.next) rel="next">{if month { "Next month ›" } else { "Next week ›" }}</a>
            </nav>
            <h2>{calendar.title.clone()}</h2>
            <nav class="calendar-views" aria-label="Calendar view">
                <a href=week_href aria-current=(!month).then_some("page")>"Week"</a>
                <a href=month_href aria-current=month.then_some("page")>"Month"</a>
            </nav>
        </div>
        <p class="hint">{format!("Times in {}.", calendar.zone)}</p>
        <div class="table-wrap">
            {if month { month_grid(&calendar).erase() } else { week_grid(&calendar).erase() }}
        </div>
    }
}

fn appointment_link(a: &AppointmentView) -> impl IntoView {
    view! {
        <a class="appointment" href=format!("{APPOINTMENTS_PATH}/{}", a.id)>
            <span class="time">{a.calendar_time.clone()}</span>" "{a.title.clone()}
        </a>
    }
}

fn week_grid(calendar: &Calendar) -> impl IntoView {
    let rows = (FIRST_HOUR..=LAST_HOUR)
        .map(|hour| {
            let cells = calendar
                .days
                .iter()
                .map(|day| {
                    let here: Vec<&AppointmentView> = calendar
                        .appointments
                        .iter()
                        .filter(|a| a.calendar_day == day.date && a.calendar_hour.clamp(FIRST_HOUR, LAST_HOUR) == hour)
                        .collect();
                    let label = format!("New appointment on {} at {hour:02}:00", day.label);
                    view! {
                        <td class:today=day.today>
                            {here.into_iter().map(appointment_link).collect_view()}
                            <a class="slot-add" href=new_href(&day.date, hour) aria-label=label>"+"</a>
                        </td>
                    }
                })
                .collect_view();
            view! { <tr><th scope="row">{format!("{hour:02}:00")}</th>{cells}</tr> }
        })
        .collect_view();
    view! {
        <table class="calendar week">
            <caption class="visually-hidden">{format!("Week of {}", calendar.title)}</caption>
            <thead>
                <tr>
                    <th scope="col"><span class="visually-hidden">"Hour"</span></th>
                    {calendar.days.iter().map(|d| view! {
                        <th scope="col" aria-current=d.today.then_some("date")>{d.label.clone()}</th>
                    }).collect_view()}
                </tr>
            </thead>
            <tbody>{rows}</tbody>
        </table>
    }
}

fn month_grid(calendar: &Calendar) -> impl IntoView {
    let weeks = calendar.days.chunks(7).map(|week| {
        let cells = week.iter().map(|day| {
            let here: Vec<&AppointmentView> = calendar.appointments.iter().filter(|a| a.calendar_day == day.date).collect();
            let label = format!("New appointment on {}", day.label);
            view! {
                <td class:today=day.today class:outside=!day.in_period>
                    <a class="day-number" href=calendar_href("week", &day.date)
                        aria-label=format!("Week of {}", day.label)>{day.label.split(' ').nth(1).unwrap_or_default().to_string()}</a>
                    {here.into_iter().map(appointment_link).collect_view()}
                    <a class="slot-add" href=new_href(&day.date, 9) aria-label=label>"+"</a>
                </td>
            }
        }).collect_view();
        view! { <tr>{cells}</tr> }
    }).collect_view();
    view! {
        <table class="calendar month">
            <caption class="visually-hidden">{calendar.title.clone()}</caption>
            <thead>
                <tr>{["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map(|d| view! { <th scope="col">{d}</th> }).collect_view()}</tr>
            </thead>
            <tbody>{weeks}</tbody>
        </table>
    }
}

/// The form's fields, shared by create and edit; named `form[…]` for the
/// server function's `AppointmentForm`.
#[component]
fn AppointmentFields(
    appointment: Option<AppointmentView>,
    start: String,
    owners: OwnerChoices,
    zones: ZonesResource,
    problem: Signal<Option<Problem>>,
) -> impl IntoView {
    let prefix = if appointment.is_some() { "edit" } else { "new" };
    let id = move |name: &str| format!("{prefix}-appointment-{name}");
    let a = appointment.clone();
    let title = a.as_ref().map(|a| a.title.clone()).unwrap_or_default();
    let start = a.as_ref().map(|a| a.start_local.clone()).unwrap_or(start);
    let zone = a.as_ref().map(|a| a.timezone_id.clone()).unwrap_or(owners.zone.clone());
    let duration = a.as_ref().map_or(30, |a| a.duration_minutes).to_string();
    let description = a.as_ref().map(|a| a.description.clone()).unwrap_or_default();
    let attendees = a.as_ref().map(|a| a.attendees.join(", ")).unwrap_or_default();
    let owner = a
        .as_ref()
        .map(|a| a.owner.clone())
        .filter(|o| !o.is_empty())
        .unwrap_or(owners.me.clone());
    let hours = a.as_ref().is_some_and(|a| a.valid_type == "HOURS");
    let (before, after) = a.as_ref().map_or((0, 0), |a| (a.valid_before, a.valid_after));
    let link_enabled = a.as_ref().is_none_or(|a| a.valid);
    let record = a.as_ref().is_some_and(|a| a.record);
    let has_password = a.as_ref().is_some_and(|a| a.has_password);
    view! {
        <div class="grid-form">
            <div class="field">
                <label for=id("title")>"Title"</label>
                <input id=id("title") name="form[title]" type="text" required=true maxlength="200" value=title
                    aria-invalid=field_invalid(problem, "title") aria-describedby=id("title-error") />
                <FieldMessage problem field="title" id=id("title-error") />
            </div>
            <div class="field">
                <label for=id("start")>"Starts"</label>
                <input id=id("start") name="form[start]" type="datetime-local" required=true value=start
                    aria-invalid=field_invalid(problem, "date") aria-describedby=id("start-error") />
                <FieldMessage problem field="date" id=id("start-error") />
            </div>
            <div class="field">
                <label for=id("duration")>"Length (minutes)"</label>
                <input id=id("duration") name="form[duration]" type="number" min="1" max="1440" value=duration
                    aria-invalid=field_invalid(problem, "durationInMinutes") aria-describedby=id("duration-error") />
                <FieldMessage problem field="durationInMinutes" id=id("duration-error") />
            </div>
            <div class="field">
                <label for=id("zone")>"Time zone"</label>
                <input id=id("zone") name="form[timezone]" type="text" list=id("zones") value=zone autocomplete="off"
                    aria-invalid=field_invalid(problem, "timezoneId") aria-describedby=id("zone-error") />
                <ZoneNames zones id=id("zones") />
                <FieldMessage problem field="timezoneId" id=id("zone-error") />
            </div>
            <div class="field">
                <label for=id("owner")>"Organiser"</label>
                <select id=id("owner") name="form[owner]" aria-invalid=field_invalid(problem, "owner") aria-describedby=id("owner-error")>
                    {owners.users.iter().map(|(uid, name)| view! {
                        <option value=uid.clone() selected=*uid == owner>{name.clone()}</option>
                    }).collect_view()}
                </select>
                <FieldMessage problem field="owner" id=id("owner-error") />
            </div>
            <div class="field">
                <label for=id("password")>{if has_password { "New password (leave empty to keep it)" } else { "Password (optional)" }}</label>
                <input id=id("password") name="form[password]" type="password" autocomplete="new-password" minlength="4" maxlength="128"
                    aria-invalid=field_invalid(problem, "password") aria-describedby=id("password-error") />
                <FieldMessage problem field="password" id=id("password-error") />
            </div>
        </div>
        <div class="field">
            <label for=id("attendees")>"Attendees' e-mails"</label>
            <textarea id=id("attendees") name="form[attendees]" rows="2" placeholder="client@example.org, colleague@example.com"
                aria-invalid=field_invalid(problem, "attendees") aria-describedby=id("attendees-error")>{attendees}</textarea>
            <FieldMessage problem field="attendees" id=id("attendees-error") />
        </div>
        <div class="field">
            <label for=id("description")>"Description (also in the invitation)"</label>
            <textarea id=id("description") name="form[description]" rows="3" maxlength="4000"
                aria-invalid=field_invalid(problem, "description") aria-describedby=id("description-error")>{description}</textarea>
            <FieldMessage problem field="description" id=id("description-error") />
        </div>
        <fieldset>
            <legend>"Join link"</legend>
            <div class="field checkbox">
                <input id=id("enabled") name="form[link_enabled]" type="checkbox" checked=link_enabled />
                <label for=id("enabled")>"The link works"</label>
            </div>
            <div class="field-row">
                <div class="field">
                    <label for=id("valid-type")>"It works"</label>
                    <select id=id("valid-type") name="form[valid_type]">
                        <option value="APPOINTMENT" selected=!hours>"during the appointment"</option>
                        <option value="HOURS" selected=hours>"from hours before to hours after"</option>
                    </select>
                </div>
                <div class="field">
                    <label for=id("before")>"Hours before"</label>
                    <input id=id("before") name="form[valid_before]" type="number" min="0" max="8760" value=before.to_string()
                        aria-invalid=field_invalid(problem, "validBefore") aria-describedby=id("before-error") />
                    <FieldMessage problem field="validBefore" id=id("before-error") />
                </div>
                <div class="field">
                    <label for=id("after")>"Hours after"</label>
                    <input id=id("after") name="form[valid_after]" type="number" min="0" max="8760" value=after.to_string()
                        aria-invalid=field_invalid(problem, "validAfter") aria-describedby=id("after-error") />
                    <FieldMessage problem field="validAfter" id=id("after-error") />
                </div>
            </div>
        </fieldset>
        <div class="field checkbox">
            <input id=id("record") name="form[record]" type="checkbox" checked=record />
            <label for=id("record")>"Record the meeting"</label>
        </div>
        <div class="field checkbox">
            <input id=id("invite") name="form[invite]" type="checkbox" />
            <label for=id("invite")>"Send invitations to the attendees when saving"</label>
        </div>
    }
}

/// `/appointments/new?start=YYYY-MM-DDTHH:MM`.
#[component]
pub fn NewAppointmentPage() -> impl IntoView {
    let query = use_query_map();
    let add = FormAction::<AddAppointment>::new();
    let owners = Resource::new(|| (), |_| appointment_owners());
    let zones = load_zone_names();
    let problem = action_problem(add.value());
    view! {
        <Title text="New appointment" />
        <Guard allowed=agents>
            <p class="breadcrumb"><a href=APPOINTMENTS_PATH>"Appointments"</a></p>
            <h1>"New appointment"</h1>
            <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading…"</p> }>
                {move || Suspend::new(async move {
                    let start = query.with_untracked(|q| q.get("start")).unwrap_or_default();
                    match owners.await {
                        Ok(owners) => view! {
                            <section class="card">
                                <PostForm action=add attr:data-unsaved-guard="">
                                    <AppointmentFields appointment=None start owners zones problem />
                                    <button type="submit" class="button primary" disabled=move || add.pending().get()>"Schedule"</button>
                                </PostForm>
                                <ActionError value=add.value() />
                            </section>
                        }.erase(),
                        Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                    }
                })}
            </Suspense>
        </Guard>
    }
}

/// `/appointments/{id}`.
#[component]
pub fn AppointmentPage() -> impl IntoView {
    let id = use_path_param("id");
    let edit = FormAction::<EditAppointment>::new();
    let recording = FormAction::<SetAppointmentRecording>::new();
    let invite = FormAction::<SendAppointmentInvitations>::new();
    let remove = FormAction::<RemoveAppointment>::new();
    let edits = successes(edit.value());
    let appointment = Resource::new(
        move || (id(), edits.get(), recording.version().get()),
        |(id, _, _)| get_appointment(id),
    );
    let recordings = Resource::new(id, appointment_recordings);
    let owners = Resource::new(|| (), |_| appointment_owners());
    let zones = load_zone_names();
    let problem = action_problem(edit.value());
    let back = BackTo {
        path: APPOINTMENTS_PATH,
        crumb: "Appointments".into(),
        text: "Back to the calendar".into(),
    };
    let render = move |(a, owners): (AppointmentView, OwnerChoices)| {
        let calendar = calendar_href("week", &a.calendar_day);
        let (state, state_class) = match a.link_state.as_str() {
            "OPEN" => ("Open now", "ok"),
            "NOT_YET" => ("Not open yet", "muted"),
            "CLOSED" => ("Closed", "muted"),
            _ => ("Switched off", "muted"),
        };
        let (edit_id, record_id, invite_id, remove_id) = (a.id.clone(), a.id.clone(), a.id.clone(), a.id.clone());
        let attendees = a.attendees.clone();
        view! {
            <h1>{a.title.clone()}</h1>
            <p class="lead">
                <a href=calendar>{format!("{} {}", a.calendar_day, a.calendar_time)}</a>
                {format!(" · {} minutes · {}", a.duration_minutes, a.timezone_id)}
            </p>
            <section class="card">
                <h2>"Join link " <span class=format!("badge {state_class}")>{state}</span></h2>
                <CopyField label="join link" value=a.join_link.clone() />
                <p class="hint">{a.validity.clone()}</p>
            </section>
            <section class="card">
                <h2>"Recording"</h2>
                <PostForm action=recording>
                    <input type="hidden" name="id" value=record_id />
                    <input type="hidden" name="record" value=(!a.record).to_string() />
                    <p>
                        {if a.record { "The meeting will be recorded. " } else { "The meeting will not be recorded. " }}
                        <button type="submit" class="button secondary small" aria-pressed=a.record.to_string()>
                            {if a.record { "Turn recording off" } else { "Turn recording on" }}
                        </button>
                    </p>
                </PostForm>
                <ActionError value=recording.value() />
                <p class="hint">
                    "Everyone in the call is told when it is recorded. Each participant's camera and sound, "
                    "and each shared screen, are recorded as WebM files, listed here once they leave the call "
                    "(sound goes on in a file of its own while a camera is off)."
                </p>
                <Suspense fallback=|| view! { <p class="muted">"Loading the recordings…"</p> }>
                    {move || Suspend::new(async move {
                        match recordings.await {
                            Ok(list) => view! { <RecordingList list /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
            <section class="card">
                <h2>"Invitations"</h2>
                {if attendees.is_empty() {
                    view! { <p class="empty">"No attendees yet: add their e-mails below."</p> }.erase()
                } else {
                    view! {
                        <p>{format!("Attendees: {}.", attendees.join(", "))}</p>
                        <PostForm action=invite>
                            <input type="hidden" name="id" value=invite_id />
                            <button type="submit" class="button secondary">"Send invitations"</button>
                        </PostForm>
                    }.erase()
                }}
                {move || match invite.value().get() {
                    Some(Ok(n)) => Some(view! {
                        <p class="note ok" role="status">{format!("Invitations to {n} attendee{} are in the mail outbox.", if n == 1 { "" } else { "s" })}</p>
                    }.erase()),
                    Some(Err(e)) => Some(view! { <ErrorNote error=e.to_string() /> }.erase()),
                    None => None,
                }}
            </section>
            <EditCard title="Details" action=edit id=edit_id>
                <AppointmentFields appointment=Some(a.clone()) start=String::new() owners zones problem />
            </EditCard>
            <DeleteCard title="Delete the appointment" summary="Delete this appointment…"
                consequence="Its join link stops working. Attendees are not told. This cannot be undone."
                action=remove id=remove_id />
        }
    };
    let load = move || async move { Ok((appointment.await?, owners.await?)) };
    view! {
        <Title text="Appointment" />
        <DetailFrame title="Appointment" allowed=agents back loading="Loading the appointment…" load render />
    }
}

/// The recordings of an appointment's calls: who, what, when, how long, and
/// a player and a download for each.
#[component]
fn RecordingList(list: Vec<CallRecordingView>) -> impl IntoView {
    if list.is_empty() {
        return view! { <p class="empty">"No recordings yet."</p> }.erase();
    }
    view! {
        <div class="table-wrap" tabindex="0" role="region" aria-label="Recordings">
            <table class="recordings">
                <caption class="visually-hidden">"Recordings of this appointment's calls"</caption>
                <thead>
                    <tr><th scope="col">"Participant"</th><th scope="col">"Shows"</th><th scope="col">"Started"</th>
                        <th scope="col">"Length"</th><th scope="col">"Size"</th><th scope="col">"Recording"</th></tr>
                </thead>
                <tbody>
                    {list.into_iter().map(|r| {
                        let label = format!("Download the recording of {} ({})", r.participant, r.source.to_lowercase());
                        view! {
                            <tr>
                                <td>{r.participant.clone()}</td>
                                <td>{r.source.clone()}</td>
                                <td>{r.started.clone()}</td>
                                <td>{r.duration.clone()}</td>
                                <td>{r.size.clone()}</td>
                                <td>
                                    <video controls=true preload="none" src=r.url.clone() width="240"
                                        aria-label=format!("Recording of {}", r.participant)></video>
                                    <a href=r.url.clone() download="" aria-label=label>"Download"</a>
                                </td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .erase()
}
