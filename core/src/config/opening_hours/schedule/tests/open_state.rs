//! Whether a schedule is open at an instant, and when that next changes: across
//! the DST changes, lunch breaks, weekends, holidays and zones.

use super::{
    all_day, at, berlin_dst, berlin_fold, berlin_gap, india, long_closure, never, new_york, office, utc_week, Schedule,
};

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
