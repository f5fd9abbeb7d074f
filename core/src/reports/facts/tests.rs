//! Unit tests of facts and their rollup pieces.

use super::*;
use chrono::TimeZone;

#[test]
fn pieces_are_cut_at_hours_and_local_midnights() {
    let kolkata: Tz = "Asia/Kolkata".parse().unwrap();
    // 23:10 to 01:20 local: midnight falls at half past a UTC hour.
    let start = kolkata
        .with_ymd_and_hms(2026, 5, 3, 23, 10, 0)
        .unwrap()
        .timestamp_millis();
    let end = start + 130 * 60_000;
    let minutes: Vec<i64> = rollup_pieces(kolkata, start, end)
        .iter()
        .map(|(_, ms)| ms / 60_000)
        .collect();
    // UTC hours end at local :30; midnight cuts the second piece.
    assert_eq!(minutes, vec![20, 30, 30, 50]);
    let pieces = rollup_pieces(kolkata, start, end);
    assert_eq!(pieces.iter().map(|(_, ms)| ms).sum::<i64>(), end - start);
    for (at, ms) in pieces {
        assert_eq!(hour_of(at), hour_of(at + ms - 1), "one UTC hour");
        assert_eq!(day_start(kolkata, at), day_start(kolkata, at + ms - 1), "one local day");
    }
    assert!(rollup_pieces(chrono_tz::UTC, start, start).is_empty());
}
