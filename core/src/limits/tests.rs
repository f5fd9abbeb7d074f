//! Unit tests of the per-tenant limits.

use super::*;

#[test]
fn an_allowance_renews_with_its_window() {
    let noon = 20_000 * DAY_MS + DAY_MS / 2;
    let wait = |meter: Meter, now: i64| match meter.spent(1, now) {
        CoreError::AllowanceSpent { retry_after_secs, .. } => retry_after_secs,
        other => panic!("{other}"),
    };
    assert_eq!(wait(Meter::RecordingBytes, noon), 43_200, "at midnight UTC");
    assert_eq!(wait(Meter::Mails, 21_000 * DAY_MS), 86_400, "at midnight, a whole day");
    assert_eq!(wait(Meter::Mails, 21_000 * DAY_MS - 1), 1, "never 0");
    assert_eq!(wait(Meter::Visitors, noon + 15_000), 45, "at the next minute");
}

#[test]
fn unset_bounds_are_the_defaults() {
    let defaults = TenantLimits::default();
    assert_eq!(defaults.recording_session_bytes, 64 * MIB);
    assert_eq!(defaults.mails_per_day, 2_000);
    let own = effective([Some(MIB), None, None, Some(0), None, None, Some(0), None]);
    assert_eq!(own.recording_session_bytes, MIB);
    assert_eq!(own.recording_day_bytes, 8 * GIB);
    assert_eq!(own.mails_per_day, 0, "0 is a bound, not the default");
    for bound in BOUNDS {
        assert!(bound.range.contains(&bound.default), "{}", bound.field);
    }
}
