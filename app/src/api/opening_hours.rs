//! Opening hours from the dashboard (admins): a weekly editor's view of
//! `/rest/v1/openinghours`. The editor shows one row of intervals per weekday;
//! stored conditions that name several days (`WORKDAYS`, `EVERYDAY`, `WEEKEND`)
//! are shown on each of their days and saved back as one condition per day,
//! which means the same.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where opening hours are managed.
pub const OPENING_HOURS_PATH: &str = "/settings/opening-hours";

/// The days of the editor, in the API's names.
pub const DAYS: [(&str, &str); 7] = [
    ("MONDAY", "Monday"),
    ("TUESDAY", "Tuesday"),
    ("WEDNESDAY", "Wednesday"),
    ("THURSDAY", "Thursday"),
    ("FRIDAY", "Friday"),
    ("SATURDAY", "Saturday"),
    ("SUNDAY", "Sunday"),
];

/// One interval of one day, times as `HH:MM`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IntervalForm {
    /// `MONDAY` … `SUNDAY`.
    pub day: String,
    /// Start, `HH:MM`; empty for an unused slot.
    pub start: String,
    /// End, `HH:MM`.
    pub end: String,
}

/// One holiday, dates as `YYYY-MM-DD`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HolidayForm {
    /// Name.
    pub name: String,
    /// First day off; empty for an unused slot.
    pub from: String,
    /// Last day off (the first when empty).
    pub to: String,
    /// Checkbox, present means on: the same dates every year (`fixedDate`).
    pub every_year: Option<String>,
}

/// Whether opening hours are open now, as the dashboard says it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoursNow {
    /// The opening hours' id.
    pub id: String,
    /// Whether they are open now.
    pub open: bool,
    /// E.g. "Open now — closes at 18:00 (Europe/Berlin)" or "Closed — opens at
    /// 09:00 on Monday (Europe/Berlin)": local times in the hours' own zone.
    pub text: String,
}

/// Opening hours as the editor shows and posts them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HoursForm {
    /// Id; empty for new opening hours.
    pub id: String,
    /// Name.
    pub name: String,
    /// IANA time zone.
    pub timezone: String,
    /// Intervals, grouped by day in the editor.
    pub intervals: Vec<IntervalForm>,
    /// Days off.
    pub holidays: Vec<HolidayForm>,
}

impl HoursForm {
    /// The intervals of `day`, in order.
    pub fn day(&self, day: &str) -> Vec<IntervalForm> {
        let mut out: Vec<IntervalForm> = self.intervals.iter().filter(|i| i.day == day).cloned().collect();
        out.sort_by(|a, b| a.start.cmp(&b.start));
        out
    }

    /// A one-line summary, e.g. "Mon 09:00–12:00, 13:00–17:00 · Sat 10:00–14:00".
    pub fn summary(&self) -> String {
        let parts: Vec<String> = DAYS
            .iter()
            .filter_map(|(day, name)| {
                let times: Vec<String> = self.day(day).iter().map(|i| format!("{}–{}", i.start, i.end)).collect();
                (!times.is_empty()).then(|| format!("{} {}", &name[..3], times.join(", ")))
            })
            .collect();
        if parts.is_empty() {
            "Closed every day".into()
        } else {
            parts.join(" · ")
        }
    }
}

#[cfg(feature = "ssr")]
mod convert {
    //! Between the editor's form and the API's object.

    use rapport_core::config::opening_hours::{
        DateParts, Holiday, OpeningCondition, OpeningConditionType, OpeningHours, TimeOfDay, Weekday,
    };

    use super::{HolidayForm, HoursForm, IntervalForm, DAYS};
    use crate::api::problem::{FieldProblem, Problem};

    fn days_of(weekday: Weekday) -> &'static [&'static str] {
        match weekday {
            Weekday::Everyday => &[
                "MONDAY",
                "TUESDAY",
                "WEDNESDAY",
                "THURSDAY",
                "FRIDAY",
                "SATURDAY",
                "SUNDAY",
            ],
            Weekday::Workdays => &["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY"],
            Weekday::Weekend => &["SATURDAY", "SUNDAY"],
            Weekday::Monday => &["MONDAY"],
            Weekday::Tuesday => &["TUESDAY"],
            Weekday::Wednesday => &["WEDNESDAY"],
            Weekday::Thursday => &["THURSDAY"],
            Weekday::Friday => &["FRIDAY"],
            Weekday::Saturday => &["SATURDAY"],
            Weekday::Sunday => &["SUNDAY"],
        }
    }

    fn weekday(day: &str) -> Option<Weekday> {
        serde_json::from_value(serde_json::Value::String(day.to_string())).ok()
    }

    fn hhmm(t: TimeOfDay) -> String {
        format!("{:02}:{:02}", t.hour, t.minute)
    }

    fn parse_time(text: &str) -> Option<TimeOfDay> {
        let (h, m) = text.trim().split_once(':')?;
        // `type=time` may add seconds: `09:00:00`.
        let m = m.split(':').next()?;
        Some(TimeOfDay {
            hour: h.parse().ok()?,
            minute: m.parse().ok()?,
        })
    }

    fn parse_date(text: &str) -> Option<DateParts> {
        let date = chrono::NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").ok()?;
        use chrono::Datelike;
        Some(DateParts {
            year: date.year(),
            month: date.month(),
            day: date.day(),
        })
    }

    fn date_text(parts: Option<DateParts>, fallback: Option<chrono::DateTime<chrono::Utc>>) -> String {
        match (parts, fallback) {
            (Some(p), _) => format!("{:04}-{:02}-{:02}", p.year, p.month, p.day),
            (None, Some(dt)) => dt.format("%Y-%m-%d").to_string(),
            (None, None) => String::new(),
        }
    }

    /// The editor's view of stored opening hours.
    pub fn to_form(hours: OpeningHours) -> HoursForm {
        let mut intervals = Vec::new();
        for c in &hours.conditions {
            for day in days_of(c.weekday) {
                intervals.push(IntervalForm {
                    day: day.to_string(),
                    start: hhmm(c.start_hours),
                    end: hhmm(c.end_hours),
                });
            }
        }
        HoursForm {
            id: hours.meta.id.unwrap_or_default(),
            name: hours.name.unwrap_or_default(),
            timezone: hours.timezone.unwrap_or_default(),
            intervals,
            holidays: hours
                .holidays
                .into_iter()
                .map(|h| HolidayForm {
                    name: h.name.unwrap_or_default(),
                    from: date_text(h.from, h.from_date),
                    to: date_text(h.to, h.to_date),
                    every_year: (h.fixed_date == Some(true)).then(|| "on".to_string()),
                })
                .collect(),
        }
    }

    /// The API object of a posted form, and for each condition and holiday the
    /// form row it came from (to put the API's messages at the right row).
    /// Blank rows are unused slots and are skipped.
    pub fn from_form(form: &HoursForm) -> Result<(OpeningHours, Vec<usize>, Vec<usize>), Problem> {
        let mut fields = Vec::new();
        let mut conditions = Vec::new();
        let mut condition_rows = Vec::new();
        for (row, i) in form.intervals.iter().enumerate() {
            if i.start.trim().is_empty() && i.end.trim().is_empty() {
                continue;
            }
            match (weekday(&i.day), parse_time(&i.start), parse_time(&i.end)) {
                (Some(weekday), Some(start), Some(end)) if DAYS.iter().any(|(d, _)| *d == i.day) => {
                    conditions.push(OpeningCondition {
                        kind: OpeningConditionType::Weekday,
                        weekday,
                        start_hours: start,
                        end_hours: end,
                    });
                    condition_rows.push(row);
                }
                _ => fields.push(FieldProblem {
                    field: format!("intervals[{row}]"),
                    message: "give both a start and an end time".into(),
                }),
            }
        }
        let mut holidays = Vec::new();
        let mut holiday_rows = Vec::new();
        for (row, h) in form.holidays.iter().enumerate() {
            if h.from.trim().is_empty() && h.to.trim().is_empty() && h.name.trim().is_empty() {
                continue;
            }
            let from = parse_date(&h.from);
            let to = if h.to.trim().is_empty() {
                from
            } else {
                parse_date(&h.to)
            };
            match (from, to) {
                (Some(from), Some(to)) => {
                    holidays.push(Holiday {
                        from: Some(from),
                        to: Some(to),
                        name: Some(h.name.trim().to_string()).filter(|n| !n.is_empty()),
                        fixed_date: h.every_year.is_some().then_some(true),
                        ..Default::default()
                    });
                    holiday_rows.push(row);
                }
                _ => fields.push(FieldProblem {
                    field: format!("holidays[{row}]"),
                    message: "give the first day off as a date".into(),
                }),
            }
        }
        if !fields.is_empty() {
            return Err(Problem {
                message: "Some rows are incomplete; see the marked fields.".into(),
                fields,
            });
        }
        let hours = OpeningHours {
            meta: rapport_core::config::Meta {
                id: Some(form.id.clone()).filter(|id| !id.is_empty()),
                ..Default::default()
            },
            name: Some(form.name.trim().to_string()).filter(|n| !n.is_empty()),
            timezone_offset: None,
            timezone: Some(form.timezone.trim().to_string()).filter(|z| !z.is_empty()),
            conditions,
            holidays,
        };
        Ok((hours, condition_rows, holiday_rows))
    }

    /// Keeps what the editor does not show of the stored `stored` in `hours`, so
    /// that saving in the dashboard loses nothing set over the API: the UTC
    /// offset (while no zone is chosen), and of every holiday still there with
    /// the same name and days, its exact times, country and import mark.
    pub fn keep_unshown(stored: &OpeningHours, hours: &mut OpeningHours) {
        if hours.timezone.is_none() {
            hours.timezone_offset = stored.timezone_offset;
        }
        // A holiday's days as the editor shows them: the last the first when none.
        let days = |h: &Holiday| {
            let from = date_text(h.from, h.from_date);
            let to = date_text(h.to, h.to_date);
            let to = if to.is_empty() { from.clone() } else { to };
            (h.name.clone(), from, to)
        };
        for holiday in &mut hours.holidays {
            let Some(before) = stored.holidays.iter().find(|s| days(s) == days(holiday)) else {
                continue;
            };
            holiday.from = before.from;
            holiday.to = before.to;
            holiday.from_date = before.from_date;
            holiday.to_date = before.to_date;
            holiday.country_code.clone_from(&before.country_code);
            holiday.imported = before.imported;
        }
    }

    /// Moves the API's field paths (`conditions[2].endHours`) to the editor's rows
    /// (`intervals[5]`).
    pub fn to_rows(mut problem: Problem, condition_rows: &[usize], holiday_rows: &[usize]) -> Problem {
        for f in &mut problem.fields {
            for (prefix, rows, name) in [
                ("conditions[", condition_rows, "intervals"),
                ("holidays[", holiday_rows, "holidays"),
            ] {
                if let Some(rest) = f.field.strip_prefix(prefix) {
                    if let Some((index, _)) = rest.split_once(']') {
                        if let Some(row) = index.parse::<usize>().ok().and_then(|i| rows.get(i)) {
                            f.field = format!("{name}[{row}]");
                        }
                    }
                }
            }
        }
        problem
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// What the dashboard says of `schedule` at `now`, in the hours' own zone.
#[cfg(feature = "ssr")]
pub fn describe_now(
    id: String,
    schedule: &rapport_core::config::opening_hours::schedule::Schedule,
    now: chrono::DateTime<chrono::Utc>,
) -> HoursNow {
    let open = schedule.is_open(now);
    let when = schedule.next_change(now).map(|change| {
        let (today, then) = (schedule.local(now), schedule.local(change));
        let time = then.format("%H:%M");
        let days = (then.date_naive() - today.date_naive()).num_days();
        match days {
            0 => format!("at {time}"),
            1 => format!("at {time} tomorrow"),
            2..=6 => format!("at {time} on {}", then.format("%A")),
            _ => format!("at {time} on {}", then.format("%a %-d %b %Y")),
        }
    });
    let state = match (open, when) {
        (true, Some(when)) => format!("Open now — closes {when}"),
        (false, Some(when)) => format!("Closed — opens {when}"),
        (true, None) => "Open now — no closing time within two years".to_string(),
        (false, None) => "Closed — no opening time within two years".to_string(),
    };
    HoursNow {
        id,
        open,
        text: format!("{state} ({})", schedule.zone_name()),
    }
}

/// Whether opening hours are open now: those with `id`, or all of the tenant's
/// when `id` is `None`. `new` (the editor of hours not yet saved) has none.
#[server(endpoint = "opening_hours_now")]
pub async fn opening_hours_now(id: Option<String>) -> Result<Vec<HoursNow>, ServerFnError> {
    use rapport_core::config::opening_hours::{schedule::Schedule, OpeningHours};
    let (ctx, user) = admin().await?;
    let now = chrono::Utc::now();
    let all = match id.as_deref() {
        Some("new") => Vec::new(),
        Some(id) => vec![ctx
            .services
            .config_get::<OpeningHours>(&user.tenant_id, id)
            .await
            .map_err(crate::ssr::to_server_error)?],
        None => ctx
            .services
            .config_all::<OpeningHours>(&user.tenant_id)
            .await
            .map_err(crate::ssr::to_server_error)?,
    };
    Ok(all
        .iter()
        .map(|h| describe_now(h.meta.id.clone().unwrap_or_default(), &Schedule::new(h), now))
        .collect())
}

/// Every opening hours object of the tenant.
#[server(endpoint = "list_opening_hours")]
pub async fn list_opening_hours() -> Result<Vec<HoursForm>, ServerFnError> {
    use rapport_core::config::opening_hours::OpeningHours;
    let (ctx, user) = admin().await?;
    Ok(ctx
        .services
        .config_all::<OpeningHours>(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .map(convert::to_form)
        .collect())
}

/// One opening hours object; `new` gives an empty one in the tenant's zone.
#[server(endpoint = "get_opening_hours")]
pub async fn get_opening_hours(id: String) -> Result<HoursForm, ServerFnError> {
    use rapport_core::config::opening_hours::OpeningHours;
    let (ctx, user) = admin().await?;
    if id == "new" {
        let tenant = ctx
            .services
            .get_tenant(&user.tenant_id)
            .await
            .map_err(crate::ssr::to_server_error)?;
        return Ok(HoursForm {
            timezone: tenant.timezone,
            ..Default::default()
        });
    }
    ctx.services
        .config_get::<OpeningHours>(&user.tenant_id, &id)
        .await
        .map(convert::to_form)
        .map_err(crate::ssr::to_server_error)
}

/// Saves the editor's form (creates when it has no id) and opens the saved object.
#[server(endpoint = "save_opening_hours_form")]
pub async fn save_opening_hours_form(form: HoursForm) -> Result<HoursForm, ServerFnError> {
    use rapport_core::config::opening_hours::OpeningHours;
    let (ctx, user) = admin().await?;
    let (mut hours, condition_rows, holiday_rows) = convert::from_form(&form).map_err(|p| {
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        }
        p.into_error()
    })?;
    if !form.id.is_empty() {
        let stored = ctx
            .services
            .config_get::<OpeningHours>(&user.tenant_id, &form.id)
            .await
            .map_err(crate::ssr::to_server_error)?;
        convert::keep_unshown(&stored, &mut hours);
    }
    let saved = ctx
        .services
        .save_opening_hours(&user.tenant_id, hours, &crate::ssr::actor(&user))
        .await
        .map_err(|e| {
            let error = crate::ssr::to_server_error(e);
            let problem = crate::api::problem::Problem::of(&error);
            if problem.fields.is_empty() {
                error
            } else {
                convert::to_rows(problem, &condition_rows, &holiday_rows).into_error()
            }
        })?;
    let saved = convert::to_form(saved);
    if form.id.is_empty() {
        leptos_axum::redirect(&format!("{OPENING_HOURS_PATH}/{}", saved.id));
    }
    Ok(saved)
}

/// Deletes opening hours that no rule uses, then shows the list.
#[server(endpoint = "delete_opening_hours_entry")]
pub async fn delete_opening_hours_entry(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_opening_hours(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(OPENING_HOURS_PATH);
    Ok(())
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use rapport_core::config::opening_hours::{Holiday, OpeningHours};

    use super::{convert, HolidayForm, HoursForm};

    #[test]
    fn saving_in_the_editor_keeps_what_it_does_not_show() {
        let new_year: chrono::DateTime<chrono::Utc> = "2027-01-01T00:00:00Z".parse().unwrap();
        let stored = OpeningHours {
            timezone_offset: Some(120),
            holidays: vec![Holiday {
                name: Some("New Year".into()),
                from_date: Some(new_year),
                to_date: Some(new_year + chrono::Duration::hours(12)),
                country_code: Some("DE".into()),
                imported: Some(true),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut form = convert::to_form(stored.clone());
        form.name = "Shop".into();
        form.holidays.push(HolidayForm {
            name: "Closed".into(),
            from: "2027-02-01".into(),
            ..Default::default()
        });
        let (mut hours, ..) = convert::from_form(&form).unwrap();
        convert::keep_unshown(&stored, &mut hours);
        assert_eq!(hours.timezone_offset, Some(120));
        assert_eq!(hours.holidays[0], stored.holidays[0]);
        // A holiday the editor added has nothing to keep.
        assert_eq!(hours.holidays[1].country_code, None);
        // A zone chosen in the editor replaces the offset.
        let zoned = HoursForm {
            timezone: "Europe/Berlin".into(),
            ..form
        };
        let (mut hours, ..) = convert::from_form(&zoned).unwrap();
        convert::keep_unshown(&stored, &mut hours);
        assert_eq!(hours.timezone_offset, None);
    }
}
