//! Settings → Opening hours (admins): `/settings/opening-hours` lists them, and
//! `/settings/opening-hours/{id}` (or `new`) is the weekly editor: each day has
//! its intervals plus one empty slot to add another, then holidays and the zone.
//! Empty slots are ignored on save, so the editor needs no script to grow.
//! Both say whether the hours are open now and when that changes, in their zone.

use crate::components::route::use_path_param;
use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::post_form::{FormAction, PostForm};
use crate::erase::EraseView;
use crate::{
    api::{
        opening_hours::{
            get_opening_hours, list_opening_hours, opening_hours_now, DeleteOpeningHoursEntry, HoursForm, HoursNow,
            IntervalForm, SaveOpeningHoursForm, DAYS, OPENING_HOURS_PATH,
        },
        problem::Problem,
    },
    components::{
        detail::{BackTo, DeleteCard, DetailFrame},
        feedback::{action_problem, field_invalid, successes, ActionError, ErrorNote, FieldMessage, SavedNote},
        layout::{admins, Guard},
        zones::{load_zone_names, ZoneNames},
    },
};

/// `/settings/opening-hours`.
#[component]
pub fn OpeningHoursListPage() -> impl IntoView {
    let hours = Resource::new(|| (), |_| list_opening_hours());
    let now = Resource::new(|| (), |_| opening_hours_now(None));
    view! {
        <Title text="Opening hours" />
        <Guard allowed=admins>
            <p class="breadcrumb"><a href="/settings">"Settings"</a></p>
            <h1>"Opening hours"</h1>
            <p class="lead">"Routing and SLA rules refer to these: when a team is open, and which days are off."</p>
            <p><a class="button primary" href=format!("{OPENING_HOURS_PATH}/new")>"New opening hours"</a></p>
            <section class="card">
                <Suspense fallback=|| view! { <p class="loading" aria-busy="true">"Loading opening hours…"</p> }>
                    {move || Suspend::new(async move {
                        // The state is a nicety: the list shows without it.
                        let states = now.await.unwrap_or_default();
                        match hours.await {
                            Ok(list) if list.is_empty() => view! {
                                <p class="empty">"No opening hours yet. Create the first to use them in rules."</p>
                            }.erase(),
                            Ok(list) => view! { <HoursTable list states /> }.erase(),
                            Err(e) => view! { <ErrorNote error=e.to_string() /> }.erase(),
                        }
                    })}
                </Suspense>
            </section>
        </Guard>
    }
}

#[component]
fn HoursTable(list: Vec<HoursForm>, states: Vec<HoursNow>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table>
                <caption class="visually-hidden">"Opening hours"</caption>
                <thead>
                    <tr>
                        <th scope="col">"Name"</th>
                        <th scope="col">"Week"</th>
                        <th scope="col">"Time zone"</th>
                        <th scope="col">"Now"</th>
                        <th scope="col" class="num">"Holidays"</th>
                    </tr>
                </thead>
                <tbody>
                    {list
                        .into_iter()
                        .map(|h| {
                            let state = states.iter().find(|s| s.id == h.id).cloned();
                            view! {
                            <tr>
                                <td><a href=format!("{OPENING_HOURS_PATH}/{}", h.id)>{display_name(&h)}</a></td>
                                <td>{h.summary()}</td>
                                <td>{h.timezone.clone()}</td>
                                <td>{state.map(|s| view! { <NowBadge state=s /> })}</td>
                                <td class="num">{h.holidays.len()}</td>
                            </tr>
                            }
                        })
                        .collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// "Open now — closes at 18:00 (Europe/Berlin)", marked open or closed.
#[component]
fn NowBadge(state: HoursNow) -> impl IntoView {
    view! {
        <span class="hours-now" data-open=state.open.to_string()>
            <span class=if state.open { "badge ok" } else { "badge muted" }>{if state.open { "Open" } else { "Closed" }}</span>
            " "
            {state.text}
        </span>
    }
}

fn display_name(h: &HoursForm) -> String {
    if h.name.is_empty() {
        "Opening hours".into()
    } else {
        h.name.clone()
    }
}

/// `/settings/opening-hours/{id}`.
#[component]
pub fn OpeningHoursPage() -> impl IntoView {
    view! {
        <Title text="Opening hours" />
        <HoursEditor />
    }
}

#[component]
fn HoursEditor() -> impl IntoView {
    let id = use_path_param("id");
    let save = FormAction::<SaveOpeningHoursForm>::new();
    let delete = FormAction::<DeleteOpeningHoursEntry>::new();
    let saved = successes(save.value());
    let hours = Resource::new(move || (id(), saved.get()), |(id, _)| get_opening_hours(id));
    let now = Resource::new(move || (id(), saved.get()), |(id, _)| opening_hours_now(Some(id)));
    let problem = action_problem(save.value());
    let zones = load_zone_names();
    let back = BackTo {
        path: OPENING_HOURS_PATH,
        crumb: "Settings › Opening hours".into(),
        text: "Back to the list".into(),
    };
    let render = move |(h, state): (HoursForm, Option<HoursNow>)| {
        let is_new = h.id.is_empty();
        let delete_id = h.id.clone();
        view! {
            <h1>{if is_new { "New opening hours".to_string() } else { display_name(&h) }}</h1>
            {state.map(|state| view! { <p class="lead" role="status"><NowBadge state /></p> })}
            <PostForm action=save attr:data-unsaved-guard="" attr:class="hours-editor">
                <input type="hidden" name="form[id]" value=h.id.clone() />
                <section class="card">
                    <div class="field-row">
                        <div class="field">
                            <label for="hours-name">"Name"</label>
                            <input id="hours-name" name="form[name]" type="text" maxlength="200" value=h.name.clone()
                                placeholder="Opening hours" aria-invalid=field_invalid(problem, "name")
                                aria-describedby="hours-name-error" />
                            <FieldMessage problem field="name" id="hours-name-error" />
                        </div>
                        <div class="field">
                            <label for="hours-zone">"Time zone"</label>
                            <input id="hours-zone" name="form[timezone]" type="text" list="zone-names" required=true
                                value=h.timezone.clone() autocomplete="off" placeholder="Europe/Berlin"
                                aria-invalid=field_invalid(problem, "timezone") aria-describedby="hours-zone-error" />
                            <FieldMessage problem field="timezone" id="hours-zone-error" />
                            <ZoneNames zones id="zone-names" />
                        </div>
                    </div>
                </section>
                <Week hours=h.clone() problem />
                <Holidays hours=h.clone() problem />
                <div class="toolbar">
                    <button type="submit" class="button primary" disabled=move || save.pending().get()>
                        {move || if save.pending().get() { "Saving…" } else { "Save opening hours" }}
                    </button>
                </div>
            </PostForm>
            <ActionError value=save.value() />
            <SavedNote value=save.value() />
            {(!is_new).then(|| view! {
                <DeleteCard title="Delete these opening hours" summary="Delete…"
                    consequence="Opening hours that a rule uses cannot be deleted; the message names the rules."
                    action=delete id=delete_id.clone() />
            })}
        }
    };
    // The resources above are created outside the guard's `Suspense` (see `Guard`).
    view! {
        <DetailFrame title="Opening hours" allowed=admins back loading="Loading opening hours…"
            load=move || async move {
                let h = hours.await?;
                // The state is a nicety: the editor shows without it.
                let state = now.await.ok().and_then(|states| states.into_iter().next());
                Ok((h, state))
            }
            render />
    }
}

/// The week: per day its intervals, then one empty slot. Rows are numbered
/// 0, 1, 2, … across the week without gaps: the posted list is read in index
/// order, so a row's index is its position, and field messages name rows by it.
#[component]
fn Week(hours: HoursForm, problem: Signal<Option<Problem>>) -> impl IntoView {
    let mut rows: Vec<(usize, IntervalForm, bool)> = Vec::new();
    for (day, _) in DAYS {
        for interval in hours.day(day) {
            rows.push((rows.len(), interval, false));
        }
        let blank = IntervalForm {
            day: day.to_string(),
            ..Default::default()
        };
        rows.push((rows.len(), blank, true));
    }
    view! {
        <section class="card">
            <h2>"Week"</h2>
            <p class="hint">"Times are in the zone above. Clear both times of an interval to remove it; fill the empty row of a day to add one."</p>
            <div class="week">
                {DAYS
                    .into_iter()
                    .map(|(day, name)| {
                        let day_rows: Vec<(usize, IntervalForm, bool)> =
                            rows.iter().filter(|(_, i, _)| i.day == day).cloned().collect();
                        let open = day_rows.iter().any(|(_, _, blank)| !blank);
                        view! {
                            <fieldset class="day">
                                <legend>{name}{(!open).then(|| view! { " " <span class="badge muted">"Closed"</span> })}</legend>
                                {day_rows
                                    .into_iter()
                                    .map(|(row, interval, blank)| view! { <IntervalRow row interval blank day_name=name problem /> })
                                    .collect_view()}
                            </fieldset>
                        }
                    })
                    .collect_view()}
            </div>
        </section>
    }
}

#[component]
fn IntervalRow(
    row: usize,
    interval: IntervalForm,
    blank: bool,
    day_name: &'static str,
    problem: Signal<Option<Problem>>,
) -> impl IntoView {
    let field = format!("intervals[{row}]");
    let what = if blank {
        format!("{day_name}, another interval")
    } else {
        format!("{day_name}, interval {}", interval.start)
    };
    let error_id = format!("interval-{row}-error");
    view! {
        <div class="interval" class:blank=blank>
            <input type="hidden" name=format!("form[intervals][{row}][day]") value=interval.day.clone() />
            <input type="time" name=format!("form[intervals][{row}][start]") value=interval.start.clone()
                aria-label=format!("{what}: opens") aria-invalid=field_invalid(problem, field.clone()) aria-describedby=error_id.clone() />
            <span aria-hidden="true">"–"</span>
            <input type="time" name=format!("form[intervals][{row}][end]") value=interval.end.clone()
                aria-label=format!("{what}: closes") aria-invalid=field_invalid(problem, field.clone()) aria-describedby=error_id.clone() />
            {blank.then(|| view! { <small class="hint">"add"</small> })}
            <FieldMessage problem field id=error_id />
        </div>
    }
}

#[component]
fn Holidays(hours: HoursForm, problem: Signal<Option<Problem>>) -> impl IntoView {
    let mut holidays = hours.holidays.clone();
    holidays.push(Default::default());
    let count = holidays.len();
    view! {
        <section class="card">
            <h2>"Holidays"</h2>
            <p class="hint">
                "Closed all day, from the first to the last date, whatever the week says. "
                "Every year: the same dates each year (Christmas). Fill the empty row to add one; clear a row to remove it."
            </p>
            <div class="table-wrap">
                <table>
                    <caption class="visually-hidden">"Holidays"</caption>
                    <thead>
                        <tr>
                            <th scope="col">"Name"</th>
                            <th scope="col">"First day"</th>
                            <th scope="col">"Last day"</th>
                            <th scope="col">"Every year"</th>
                        </tr>
                    </thead>
                    <tbody>
                        {holidays
                            .into_iter()
                            .enumerate()
                            .map(|(row, h)| {
                                let field = format!("holidays[{row}]");
                                let label = if row + 1 == count { "New holiday".to_string() } else { format!("Holiday {}", row + 1) };
                                let error_id = format!("holiday-{row}-error");
                                view! {
                                    <tr>
                                        <td>
                                            <input type="text" name=format!("form[holidays][{row}][name]") value=h.name maxlength="200"
                                                aria-label=format!("{label}: name") />
                                            <FieldMessage problem field=field.clone() id=error_id.clone() />
                                        </td>
                                        <td>
                                            <input type="date" name=format!("form[holidays][{row}][from]") value=h.from
                                                aria-label=format!("{label}: first day") aria-invalid=field_invalid(problem, field)
                                                aria-describedby=error_id.clone() />
                                        </td>
                                        <td>
                                            <input type="date" name=format!("form[holidays][{row}][to]") value=h.to
                                                aria-label=format!("{label}: last day") aria-describedby=error_id />
                                        </td>
                                        <td>
                                            <input type="checkbox" name=format!("form[holidays][{row}][every_year]") value="on"
                                                checked=h.every_year.is_some() aria-label=format!("{label}: every year") />
                                        </td>
                                    </tr>
                                }
                            })
                            .collect_view()}
                    </tbody>
                </table>
            </div>
        </section>
    }
}
