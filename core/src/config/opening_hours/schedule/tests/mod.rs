//! Table tests of [`Schedule`]: DST in Europe/Berlin (29 March and 25 October
//! 2026), several intervals a day, workdays and weekends, holidays (ranges,
//! date-times, yearly), fixed offsets, and SLA deadlines across nights, weekends and
//! holidays. Instants are written in UTC with the Berlin wall time beside them
//! (CET = UTC+1 until 29 March 2026 01:00Z, then CEST = UTC+2 until 25 October
//! 2026 01:00Z).
//!
//! The fixtures live here; each module tests one side of a schedule.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::Schedule;

mod open_state;
mod open_time;
mod zones_and_dates;

fn schedule(hours: Value) -> Schedule {
    Schedule::new(&serde_json::from_value(hours).expect("opening hours"))
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn interval(weekday: &str, start: &str, end: &str) -> Value {
    let time = |t: &str| {
        let (h, m) = t.split_once(':').unwrap();
        json!({"hour": h.parse::<i32>().unwrap(), "minute": m.parse::<i32>().unwrap()})
    };
    json!({"type": "WEEKDAY", "weekday": weekday, "startHours": time(start), "endHours": time(end)})
}

fn day(text: &str) -> Value {
    let d: chrono::NaiveDate = text.parse().unwrap();
    use chrono::Datelike;
    json!({"year": d.year(), "month": d.month(), "day": d.day()})
}

/// Berlin: Sunday 01:30–03:30 (across both DST changes), Saturday and Monday 09–18.
fn berlin_dst() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin", "conditions": [
        interval("SUNDAY", "01:30", "03:30"),
        interval("SATURDAY", "09:00", "18:00"),
        interval("MONDAY", "09:00", "18:00"),
    ]}))
}

/// Berlin: Sundays 02:15–02:45 (inside the spring gap) and 02:30–03:00 (inside the
/// autumn fold) as two schedules.
fn berlin_gap() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin", "conditions": [interval("SUNDAY", "02:15", "02:45")]}))
}
fn berlin_fold() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin", "conditions": [interval("SUNDAY", "02:30", "03:00")]}))
}

/// An office in Berlin: lunch break on workdays, short weekends, and holidays of
/// every form.
fn office() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin",
    "conditions": [
        interval("WORKDAYS", "13:30", "18:00"),
        interval("WORKDAYS", "09:00", "12:30"),
        interval("WEEKEND", "10:00", "14:00"),
    ],
    "holidays": [
        {"name": "Christmas", "from": day("2026-12-24"), "to": day("2026-12-26"), "fixedDate": true},
        {"name": "New Year", "from": day("2026-12-31"), "to": day("2027-01-01"), "fixedDate": true},
        {"name": "Corpus Christi", "from": day("2026-06-04")},
        {"name": "Bridge day", "fromDate": "2026-10-02T00:00:00Z", "toDate": "2026-10-02T00:00:00Z"},
    ]}))
}

/// Berlin workdays 09–18 with Easter Monday off: the SLA cases.
fn sla() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin",
        "conditions": [interval("WORKDAYS", "09:00", "18:00")],
        "holidays": [{"name": "Easter Monday", "from": day("2026-04-06")}]}))
}

/// India by offset only (UTC+05:30), workdays 09–17.
fn india() -> Schedule {
    schedule(json!({"timezoneOffset": 330, "conditions": [interval("WORKDAYS", "09:00", "17:00")]}))
}

/// A zone name and an offset: the name wins.
fn new_york() -> Schedule {
    schedule(json!({"timezone": "America/New_York", "timezoneOffset": 330,
        "conditions": [interval("WORKDAYS", "09:00", "17:00")]}))
}

/// Neither: UTC. Monday and Wednesday only, with a closed Tuesday between;
/// overlapping Monday intervals; Friday evening running into Saturday morning.
fn utc_week() -> Schedule {
    schedule(json!({"conditions": [
        interval("MONDAY", "09:00", "12:00"),
        interval("MONDAY", "11:00", "17:00"),
        interval("WEDNESDAY", "09:00", "17:00"),
        interval("FRIDAY", "18:00", "23:59"),
        interval("SATURDAY", "00:00", "02:00"),
    ]}))
}

/// Every day to 23:59, which runs to midnight: open at every instant.
fn all_day() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin", "conditions": [interval("EVERYDAY", "00:00", "23:59")]}))
}

/// No intervals at all.
fn never() -> Schedule {
    schedule(json!({"timezone": "Europe/Berlin"}))
}

/// Open on workdays, but off for longer than the horizon.
fn long_closure() -> Schedule {
    schedule(json!({"conditions": [interval("WORKDAYS", "09:00", "17:00")],
        "holidays": [{"from": day("2026-01-01"), "to": day("2029-12-31")}]}))
}
