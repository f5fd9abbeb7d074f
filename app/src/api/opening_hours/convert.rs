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
