//! Zones are named and local times shown in them; the weekdays the schedule
//! tests rely on are checked.

use super::{at, india, office, utc_week};

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
