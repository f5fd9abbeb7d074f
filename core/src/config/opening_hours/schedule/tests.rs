//! Table tests of [`Schedule`]: DST in Europe/Berlin (29 March and 25 October
//! 2026), several intervals a day, workdays and weekends, holidays (ranges,
//! date-times, yearly), fixed offsets, and SLA deadlines across nights, weekends and
//! holidays. Instants are written in UTC with the Berlin wall time beside them
//! (CET = UTC+1 until 29 March 2026 01:00Z, then CEST = UTC+2 until 25 October
//! 2026 01:00Z).

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::{Schedule, HORIZON_DAYS};

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

#[test]
fn is_open() {
    let cases: Vec<(&str, Schedule, &str, bool)> = vec![
        // 29 March: 01:30 CET = 00:30Z; the gap 02:00–03:00 CET does not exist;
        // 03:30 CEST = 01:30Z.
        ("spring: before", berlin_dst(), "2026-03-29T00:29:59Z", false),
        ("spring: 01:30 CET", berlin_dst(), "2026-03-29T00:30:00Z", true),
        ("spring: 01:59 CET", berlin_dst(), "2026-03-29T00:59:59Z", true),
        ("spring: 03:00 CEST", berlin_dst(), "2026-03-29T01:00:00Z", true),
        ("spring: 03:29 CEST", berlin_dst(), "2026-03-29T01:29:59Z", true),
        (
            "spring: 03:30 CEST, end excluded",
            berlin_dst(),
            "2026-03-29T01:30:00Z",
            false,
        ),
        ("Saturday before, 09:00 CET", berlin_dst(), "2026-03-28T08:00:00Z", true),
        (
            "Saturday before, 08:59 CET",
            berlin_dst(),
            "2026-03-28T07:59:00Z",
            false,
        ),
        ("Monday after, 09:00 CEST", berlin_dst(), "2026-03-30T07:00:00Z", true),
        ("Monday after, 08:30 CEST", berlin_dst(), "2026-03-30T06:30:00Z", false),
        ("Monday after, 17:59 CEST", berlin_dst(), "2026-03-30T15:59:00Z", true),
        ("Monday after, 18:00 CEST", berlin_dst(), "2026-03-30T16:00:00Z", false),
        (
            "gap interval opens nothing",
            berlin_gap(),
            "2026-03-29T01:00:00Z",
            false,
        ),
        (
            "gap interval on a winter Sunday",
            berlin_gap(),
            "2026-03-22T01:15:00Z",
            true,
        ),
        // 25 October: 01:30 CEST = 24 Oct 23:30Z; 02:00–03:00 twice; 03:30 CET = 02:30Z.
        ("autumn: 01:30 CEST", berlin_dst(), "2026-10-24T23:30:00Z", true),
        ("autumn: 02:45 CEST", berlin_dst(), "2026-10-25T00:45:00Z", true),
        ("autumn: 02:45 CET", berlin_dst(), "2026-10-25T01:45:00Z", true),
        ("autumn: 03:29 CET", berlin_dst(), "2026-10-25T02:29:59Z", true),
        ("autumn: 03:30 CET", berlin_dst(), "2026-10-25T02:30:00Z", false),
        ("fold: 02:45 CEST", berlin_fold(), "2026-10-25T00:45:00Z", true),
        ("fold: 02:15 CET", berlin_fold(), "2026-10-25T01:15:00Z", false),
        ("fold: 02:45 CET", berlin_fold(), "2026-10-25T01:45:00Z", true),
        // Several intervals a day; workdays and weekends.
        ("morning", office(), "2026-06-09T10:00:00Z", true),
        ("lunch", office(), "2026-06-09T10:30:00Z", false),
        ("afternoon", office(), "2026-06-09T11:30:00Z", true),
        ("Saturday 11:00", office(), "2026-06-13T09:00:00Z", true),
        ("Saturday 15:00", office(), "2026-06-13T13:00:00Z", false),
        // Holidays win over weekdays.
        ("one-off holiday", office(), "2026-06-04T08:00:00Z", false),
        ("one-off holiday does not recur", office(), "2027-06-04T08:00:00Z", true),
        ("date-time holiday", office(), "2026-10-02T08:00:00Z", false),
        ("the day before it", office(), "2026-10-01T08:00:00Z", true),
        ("Christmas 2026", office(), "2026-12-24T09:00:00Z", false),
        ("Christmas recurs in 2027", office(), "2027-12-24T09:00:00Z", false),
        ("after Christmas 2028", office(), "2028-12-27T09:00:00Z", true),
        ("New Year's Eve 2027", office(), "2027-12-31T09:00:00Z", false),
        ("New Year 2028 (range wraps)", office(), "2028-01-01T09:00:00Z", false),
        ("first workday of 2028", office(), "2028-01-03T09:00:00Z", true),
        // Zones.
        ("offset: 09:00 IST", india(), "2026-03-24T03:30:00Z", true),
        ("offset: 08:59 IST", india(), "2026-03-24T03:29:00Z", false),
        ("offset: 17:00 IST", india(), "2026-03-24T11:30:00Z", false),
        ("name wins: 09:00 EDT", new_york(), "2026-03-24T13:00:00Z", true),
        ("name wins: not IST", new_york(), "2026-03-24T03:30:00Z", false),
        ("no zone: UTC", utc_week(), "2026-03-23T09:00:00Z", true),
        ("closed Tuesday", utc_week(), "2026-03-24T12:00:00Z", false),
        ("23:59 runs to midnight", all_day(), "2026-03-24T22:59:30Z", true),
        ("never", never(), "2026-03-24T10:00:00Z", false),
        ("always", Schedule::always(), "2026-03-24T10:00:00Z", true),
    ];
    for (name, schedule, instant, open) in cases {
        assert_eq!(schedule.is_open(at(instant)), open, "{name} at {instant}");
    }
}

#[test]
fn next_change() {
    let cases: Vec<(&str, Schedule, &str, Option<&str>)> = vec![
        (
            "spring: opens 01:30 CET",
            berlin_dst(),
            "2026-03-29T00:00:00Z",
            Some("2026-03-29T00:30:00Z"),
        ),
        (
            "spring: closes 03:30 CEST",
            berlin_dst(),
            "2026-03-29T00:45:00Z",
            Some("2026-03-29T01:30:00Z"),
        ),
        (
            "spring: Monday 09:00 CEST",
            berlin_dst(),
            "2026-03-29T01:30:00Z",
            Some("2026-03-30T07:00:00Z"),
        ),
        (
            "Saturday 09:00 CET",
            berlin_dst(),
            "2026-03-27T20:00:00Z",
            Some("2026-03-28T08:00:00Z"),
        ),
        (
            "Saturday 18:00 CET",
            berlin_dst(),
            "2026-03-28T12:00:00Z",
            Some("2026-03-28T17:00:00Z"),
        ),
        (
            "gap day skipped",
            berlin_gap(),
            "2026-03-28T12:00:00Z",
            Some("2026-04-05T00:15:00Z"),
        ),
        (
            "autumn: opens 01:30 CEST",
            berlin_dst(),
            "2026-10-24T23:00:00Z",
            Some("2026-10-24T23:30:00Z"),
        ),
        (
            "autumn: one interval over both passes",
            berlin_dst(),
            "2026-10-25T00:00:00Z",
            Some("2026-10-25T02:30:00Z"),
        ),
        (
            "fold: first pass ends",
            berlin_fold(),
            "2026-10-25T00:45:00Z",
            Some("2026-10-25T01:00:00Z"),
        ),
        (
            "fold: second pass opens",
            berlin_fold(),
            "2026-10-25T01:00:00Z",
            Some("2026-10-25T01:30:00Z"),
        ),
        (
            "lunch starts",
            office(),
            "2026-06-09T10:00:00Z",
            Some("2026-06-09T10:30:00Z"),
        ),
        (
            "lunch ends",
            office(),
            "2026-06-09T10:45:00Z",
            Some("2026-06-09T11:30:00Z"),
        ),
        (
            "at opening: closes next",
            office(),
            "2026-06-09T07:00:00Z",
            Some("2026-06-09T10:30:00Z"),
        ),
        (
            "Friday evening: Saturday 10:00",
            office(),
            "2026-06-12T16:30:00Z",
            Some("2026-06-13T08:00:00Z"),
        ),
        (
            "Saturday afternoon: Sunday 10:00",
            office(),
            "2026-06-13T13:00:00Z",
            Some("2026-06-14T08:00:00Z"),
        ),
        (
            "Sunday afternoon: Monday 09:00",
            office(),
            "2026-06-14T12:00:00Z",
            Some("2026-06-15T07:00:00Z"),
        ),
        (
            "holiday: next workday",
            office(),
            "2026-06-04T08:00:00Z",
            Some("2026-06-05T07:00:00Z"),
        ),
        (
            "over Christmas: Sunday 27th",
            office(),
            "2026-12-23T17:30:00Z",
            Some("2026-12-27T09:00:00Z"),
        ),
        (
            "over New Year: Saturday 2nd",
            office(),
            "2026-12-30T17:30:00Z",
            Some("2027-01-02T09:00:00Z"),
        ),
        (
            "offset: opens 09:00 IST",
            india(),
            "2026-03-24T11:30:00Z",
            Some("2026-03-25T03:30:00Z"),
        ),
        (
            "closed Tuesday between",
            utc_week(),
            "2026-03-23T17:00:00Z",
            Some("2026-03-25T09:00:00Z"),
        ),
        (
            "overlapping intervals merge",
            utc_week(),
            "2026-03-23T09:30:00Z",
            Some("2026-03-23T17:00:00Z"),
        ),
        (
            "across midnight as one",
            utc_week(),
            "2026-03-27T20:00:00Z",
            Some("2026-03-28T02:00:00Z"),
        ),
        ("open for good", all_day(), "2026-03-24T10:00:00Z", None),
        ("never opens", never(), "2026-03-24T10:00:00Z", None),
        (
            "closed beyond the horizon",
            long_closure(),
            "2026-06-01T10:00:00Z",
            None,
        ),
        ("always", Schedule::always(), "2026-03-24T10:00:00Z", None),
    ];
    for (name, schedule, instant, expected) in cases {
        assert_eq!(
            schedule.next_change(at(instant)),
            expected.map(at),
            "{name} from {instant}"
        );
        // A change is a change: the state differs there and not just before it.
        if let Some(change) = expected.map(at) {
            let before = change - chrono::Duration::milliseconds(1);
            assert_eq!(schedule.is_open(before), schedule.is_open(at(instant)), "{name}");
            assert_ne!(schedule.is_open(change), schedule.is_open(at(instant)), "{name}");
        }
    }
}

#[test]
fn add_open_time() {
    let cases: Vec<(&str, Schedule, &str, i64, Option<&str>)> = vec![
        // 17:55 CET Tuesday + 10 min, open 09–18 on workdays: 09:05 CET Wednesday.
        (
            "closed night",
            sla(),
            "2026-03-24T16:55:00Z",
            600,
            Some("2026-03-25T08:05:00Z"),
        ),
        // Friday 17:55 CET: Monday 09:05, now CEST.
        (
            "weekend and DST",
            sla(),
            "2026-03-27T16:55:00Z",
            600,
            Some("2026-03-30T07:05:00Z"),
        ),
        // Friday 17:55 CEST before Easter Monday: Tuesday 09:05 CEST.
        (
            "Monday holiday",
            sla(),
            "2026-04-03T15:55:00Z",
            600,
            Some("2026-04-07T07:05:00Z"),
        ),
        (
            "due exactly at closing",
            sla(),
            "2026-03-24T16:55:00Z",
            300,
            Some("2026-03-24T17:00:00Z"),
        ),
        (
            "started at night",
            sla(),
            "2026-03-24T22:00:00Z",
            3600,
            Some("2026-03-25T09:00:00Z"),
        ),
        (
            "two days and a minute",
            sla(),
            "2026-03-23T08:00:00Z",
            2 * 9 * 3600 + 60,
            Some("2026-03-25T08:01:00Z"),
        ),
        (
            "over lunch",
            office(),
            "2026-06-09T10:00:00Z",
            3600,
            Some("2026-06-09T12:00:00Z"),
        ),
        (
            "spring gap counts nothing",
            berlin_dst(),
            "2026-03-29T00:30:00Z",
            3600,
            Some("2026-03-29T01:30:00Z"),
        ),
        (
            "autumn fold counts twice",
            berlin_dst(),
            "2026-10-24T23:30:00Z",
            3 * 3600,
            Some("2026-10-25T02:30:00Z"),
        ),
        (
            "milliseconds kept",
            utc_week(),
            "2026-03-23T09:00:00.500Z",
            1,
            Some("2026-03-23T09:00:01.500Z"),
        ),
        ("zero", never(), "2026-03-24T10:00:00Z", 0, Some("2026-03-24T10:00:00Z")),
        ("never opens", never(), "2026-03-24T10:00:00Z", 1, None),
        ("beyond the horizon", long_closure(), "2026-06-01T10:00:00Z", 1, None),
        (
            "always",
            Schedule::always(),
            "2026-03-24T10:00:00Z",
            600,
            Some("2026-03-24T10:10:00Z"),
        ),
        (
            "always, beyond the horizon",
            Schedule::always(),
            "2026-03-24T10:00:00Z",
            (HORIZON_DAYS + 1) * 86_400,
            None,
        ),
    ];
    for (name, schedule, start, seconds, expected) in cases {
        let due = schedule.add_open_time(at(start), seconds);
        assert_eq!(due, expected.map(at), "{name} from {start} + {seconds} s");
        if let Some(due) = due {
            assert_eq!(
                schedule.open_seconds_between(at(start), due),
                seconds,
                "{name}: round trip"
            );
        }
    }
}

#[test]
fn open_seconds_between() {
    let cases: Vec<(&str, Schedule, &str, &str, i64)> = vec![
        // Whole local Sundays: 00:00 CET to 00:00 CEST is 23 h long, 25 h in October.
        (
            "spring Sunday: 1 h",
            berlin_dst(),
            "2026-03-28T23:00:00Z",
            "2026-03-29T22:00:00Z",
            3600,
        ),
        (
            "autumn Sunday: 3 h",
            berlin_dst(),
            "2026-10-24T22:00:00Z",
            "2026-10-25T23:00:00Z",
            3 * 3600,
        ),
        (
            "fold: two half hours",
            berlin_fold(),
            "2026-10-24T22:00:00Z",
            "2026-10-25T23:00:00Z",
            3600,
        ),
        (
            "gap: nothing",
            berlin_gap(),
            "2026-03-28T23:00:00Z",
            "2026-03-29T22:00:00Z",
            0,
        ),
        // Monday to Monday in June: 5 × 8 h on workdays + 2 × 4 h at the weekend.
        (
            "office week",
            office(),
            "2026-06-07T22:00:00Z",
            "2026-06-14T22:00:00Z",
            48 * 3600,
        ),
        (
            "over the weekend",
            sla(),
            "2026-03-27T16:55:00Z",
            "2026-03-30T07:05:00Z",
            600,
        ),
        (
            "within one interval",
            sla(),
            "2026-03-24T09:00:00Z",
            "2026-03-24T09:00:30Z",
            30,
        ),
        (
            "closed Tuesday between",
            utc_week(),
            "2026-03-23T00:00:00Z",
            "2026-03-26T00:00:00Z",
            16 * 3600,
        ),
        ("backwards", sla(), "2026-03-25T09:00:00Z", "2026-03-24T09:00:00Z", 0),
        ("never", never(), "2026-03-23T00:00:00Z", "2026-03-30T00:00:00Z", 0),
        (
            "always",
            Schedule::always(),
            "2026-03-23T00:00:00Z",
            "2026-03-30T00:00:00Z",
            7 * 86_400,
        ),
    ];
    for (name, schedule, a, b, seconds) in cases {
        assert_eq!(schedule.open_seconds_between(at(a), at(b)), seconds, "{name}");
    }
}

#[test]
fn zones_are_named_and_local_times_shown_in_them() {
    assert_eq!(office().zone_name(), "Europe/Berlin");
    assert_eq!(india().zone_name(), "UTC+05:30");
    assert_eq!(utc_week().zone_name(), "UTC");
    let local = office().local(at("2026-03-30T07:00:00Z"));
    assert_eq!(
        local.format("%Y-%m-%d %H:%M %:z").to_string(),
        "2026-03-30 09:00 +02:00"
    );
    let local = office().local(at("2026-03-27T08:00:00Z"));
    assert_eq!(local.format("%H:%M %:z").to_string(), "09:00 +01:00");
}

#[test]
fn weekdays_named_in_these_tests_are_right() {
    use chrono::{Datelike, NaiveDate, Weekday::*};
    for (date, weekday) in [
        ("2026-03-24", Tue),
        ("2026-03-27", Fri),
        ("2026-03-29", Sun),
        ("2026-04-06", Mon),
        ("2026-06-04", Thu),
        ("2026-10-25", Sun),
        ("2026-12-24", Thu),
        ("2026-12-27", Sun),
        ("2027-12-24", Fri),
        ("2028-01-03", Mon),
    ] {
        assert_eq!(date.parse::<NaiveDate>().unwrap().weekday(), weekday, "{date}");
    }
}
