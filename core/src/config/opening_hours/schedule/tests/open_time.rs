//! Open time: SLA deadlines that count only open time (across nights, weekends,
//! holidays and DST changes), and the open seconds between two instants.

use super::{at, berlin_dst, berlin_fold, berlin_gap, long_closure, never, office, sla, utc_week, Schedule};
use crate::config::opening_hours::schedule::HORIZON_DAYS;

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
