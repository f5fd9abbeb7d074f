//! A report's period and its buckets, cut in an IANA time zone.
//!
//! Bucketing works in "wall-clock milliseconds": an instant plus the zone's UTC
//! offset at that instant. A bucket is `wall.div_euclid(len)` for a fixed `len`
//! (minute, hour) or the local calendar day. The period is split into *segments*
//! where the offset is constant, so each segment can bucket with one expression,
//! in SQL (`(at + offset) / len`) or in Rust; the labels of two segments that fall
//! in the same local day (a DST day) merge into one bucket of the right length.

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use super::{
    api::{Grouping, MAX_TIME_MS},
    zones::ZoneCheck,
};
use crate::error::{CoreError, CoreResult};

const MINUTE: i64 = 60_000;
/// An hour, ms: the granularity of rollups.
pub(crate) const HOUR: i64 = 3_600_000;
const DAY: i64 = 86_400_000;
/// The longest `CUSTOM` period: five years of daily buckets.
pub(crate) const MAX_CUSTOM_SPAN: i64 = 5 * 366 * DAY;
/// `CUSTOM` periods up to this long are bucketed by hour.
const HOURLY_CUSTOM_SPAN: i64 = 48 * HOUR;

/// The size of a bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketUnit {
    /// One minute (`YYYY/MM/DD HH:mm`).
    Minute,
    /// One hour (`YYYY/MM/DD HH`).
    Hour,
    /// One local day (`YYYY/MM/DD`).
    Day,
}

impl BucketUnit {
    /// The bucket length in wall-clock milliseconds.
    pub fn len_ms(self) -> i64 {
        match self {
            BucketUnit::Minute => MINUTE,
            BucketUnit::Hour => HOUR,
            BucketUnit::Day => DAY,
        }
    }
}

/// A stretch of the period where the zone's offset does not change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// First instant, unix ms.
    pub start: i64,
    /// End instant (exclusive), unix ms.
    pub end: i64,
    /// The zone's offset from UTC in this segment, ms.
    pub offset: i64,
}

/// A report period with its buckets.
#[derive(Debug, Clone)]
pub struct Window {
    /// The zone buckets are cut in.
    pub tz: Tz,
    /// First instant, unix ms (inclusive).
    pub start: i64,
    /// Last instant, unix ms (exclusive).
    pub end: i64,
    /// Bucket size.
    pub unit: BucketUnit,
    segments: Vec<Segment>,
    /// The tenant's day rollups, when they were read together with its zone.
    pub(crate) kept_days: KeptDays,
    /// When the zone state the window was cut with came from the cache: the
    /// check that the report's statements carry (see [`super::zones`]).
    pub(crate) check: Option<Arc<ZoneCheck>>,
}

/// What is known of a tenant's day rollups (see [`super::days`]) for a window.
/// A report reads it with the tenant's zone, in the same statement, so that
/// finding the whole days it can answer from day rows costs no round trip.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum KeptDays {
    /// Not read: ask the database.
    #[default]
    Unread,
    /// No day rows in this window's zone.
    Absent,
    /// Day rows kept in this window's zone, complete from `complete_from` (and
    /// script-error rows from `errors_from`).
    Kept { complete_from: i64, errors_from: i64 },
}

/// What a window is computed from.
#[derive(Debug, Clone, Copy)]
pub struct WindowSpec<'a> {
    /// The grouping.
    pub grouping: Grouping,
    /// `CUSTOM` start, ms.
    pub from: Option<i64>,
    /// `CUSTOM` end, ms.
    pub to: Option<i64>,
    /// The zone.
    pub tz: Tz,
    /// Now, ms.
    pub now: i64,
    /// For `ALL`: the first recorded fact, ms, if any.
    pub first_fact: Option<i64>,
    /// Field name prefix for errors (`dateFilter.` or ``).
    pub field: &'a str,
}

/// Parses an IANA zone name; a 422 at `field` when unknown.
pub fn parse_zone(field: &str, name: &str) -> CoreResult<Tz> {
    name.parse::<Tz>().map_err(|_| {
        CoreError::invalid(
            field,
            "invalid_time_zone",
            format!("{name:?} is not an IANA time zone (e.g. Europe/Berlin)"),
        )
    })
}

/// The instant `date` starts in `tz`.
pub(crate) fn local_midnight(tz: Tz, date: NaiveDate) -> i64 {
    // Midnight can fall in a DST gap (a few zones switch at 00:00); the day then
    // starts at the first instant that exists.
    let mut t = date.and_hms_opt(0, 0, 0).expect("midnight exists");
    for _ in 0..4 {
        if let Some(dt) = tz.from_local_datetime(&t).earliest() {
            return dt.timestamp_millis();
        }
        t += chrono::Duration::minutes(30);
    }
    Utc.from_utc_datetime(&t).timestamp_millis()
}

fn local_date(tz: Tz, ms: i64) -> NaiveDate {
    tz.timestamp_millis_opt(ms)
        .single()
        .expect("valid instant")
        .date_naive()
}

/// The zone's UTC offset at instant `ms`, in ms.
pub fn offset_at(tz: Tz, ms: i64) -> i64 {
    let utc = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
    i64::from(tz.offset_from_utc_datetime(&utc.naive_utc()).fix().local_minus_utc()) * 1000
}

impl Window {
    /// Computes the period and bucket size of a grouping.
    pub fn new(spec: WindowSpec<'_>) -> CoreResult<Window> {
        let WindowSpec { tz, now, .. } = spec;
        let today = local_date(tz, now);
        let day_start = |d: NaiveDate| local_midnight(tz, d);
        let (start, end, unit) = match spec.grouping {
            Grouping::Today => (day_start(today), now, BucketUnit::Hour),
            Grouping::TodayByMinute => (day_start(today), now, BucketUnit::Minute),
            Grouping::Last7Days => (day_start(today - Days::new(6)), now, BucketUnit::Day),
            Grouping::LastMonth => {
                let first = today.checked_sub_months(Months::new(1)).unwrap_or(today) + Days::new(1);
                (day_start(first), now, BucketUnit::Day)
            }
            Grouping::LastYear => {
                let first = today.checked_sub_months(Months::new(12)).unwrap_or(today) + Days::new(1);
                (day_start(first), now, BucketUnit::Day)
            }
            Grouping::All => {
                let first = spec.first_fact.map(|ms| local_date(tz, ms.min(now))).unwrap_or(today);
                (day_start(first), now, BucketUnit::Day)
            }
            Grouping::Custom => {
                let field = |name: &str| format!("{}{name}", spec.field);
                let from = spec
                    .from
                    .ok_or_else(|| CoreError::invalid(field("from"), "required", "CUSTOM needs from (unix ms)"))?;
                let to = spec
                    .to
                    .ok_or_else(|| CoreError::invalid(field("to"), "required", "CUSTOM needs to (unix ms)"))?;
                for (name, value) in [("from", from), ("to", to)] {
                    if !(0..=MAX_TIME_MS).contains(&value) {
                        return Err(CoreError::invalid(
                            field(name),
                            "out_of_range",
                            format!("{name} is not a time from 0 to {MAX_TIME_MS}"),
                        ));
                    }
                }
                if to <= from {
                    return Err(CoreError::invalid(field("to"), "before_start", "to must be after from"));
                }
                if to - from > MAX_CUSTOM_SPAN {
                    return Err(CoreError::invalid(
                        field("to"),
                        "range_too_long",
                        "a CUSTOM range is at most five years",
                    ));
                }
                let unit = if to - from <= HOURLY_CUSTOM_SPAN {
                    BucketUnit::Hour
                } else {
                    BucketUnit::Day
                };
                (from, to, unit)
            }
        };
        // `now` can sit exactly on midnight: keep at least the current bucket.
        let end = end.max(start + 1);
        let segments = segments(tz, start, end);
        Ok(Window {
            tz,
            start,
            end,
            unit,
            segments,
            kept_days: KeptDays::Unread,
            check: None,
        })
    }

    /// The period of the same length just before this one, with the same zone and
    /// bucket size ("versus the previous period").
    pub fn previous(&self) -> Window {
        let (start, end) = (2 * self.start - self.end, self.start);
        Window {
            tz: self.tz,
            start,
            end,
            unit: self.unit,
            segments: segments(self.tz, start, end),
            kept_days: self.kept_days,
            check: self.check.clone(),
        }
    }

    /// The segments of constant offset, in order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// True when every segment's offset is a whole number of hours, so hourly
    /// rollups (cut on UTC hours) fall exactly into this window's buckets.
    pub fn hour_aligned(&self) -> bool {
        self.unit != BucketUnit::Minute && self.segments.iter().all(|s| s.offset % HOUR == 0)
    }

    /// The part of the window inside `[start, end)`, with the same buckets; `None`
    /// when nothing is left.
    pub fn clip(&self, start: i64, end: i64) -> Option<Window> {
        let (start, end) = (start.max(self.start), end.min(self.end));
        if start >= end {
            return None;
        }
        let segments = self
            .segments
            .iter()
            .filter_map(|s| {
                let (a, b) = (s.start.max(start), s.end.min(end));
                (a < b).then_some(Segment {
                    start: a,
                    end: b,
                    offset: s.offset,
                })
            })
            .collect();
        Some(Window {
            tz: self.tz,
            start,
            end,
            unit: self.unit,
            segments,
            kept_days: self.kept_days,
            check: self.check.clone(),
        })
    }

    /// A SQL expression for the bucket of instant column `column`, for the whole
    /// window in one query: the segments' offsets are chosen by `case`. (The
    /// values are computed here, not taken from a request, so they are written
    /// into the SQL as integer literals.)
    pub fn bucket_sql(&self, column: &str) -> String {
        let len = self.unit.len_ms();
        let Some((last, rest)) = self.segments.split_last() else {
            return format!("{column} / {len}");
        };
        if rest.is_empty() {
            return format!("({column} + {}) / {len}", last.offset);
        }
        let mut sql = String::from("case");
        for seg in rest {
            sql += &format!(" when {column} < {} then ({column} + {}) / {len}", seg.end, seg.offset);
        }
        sql += &format!(" else ({column} + {}) / {len} end", last.offset);
        sql
    }

    /// The whole UTC hours inside the window, `[start, end)`: what hourly rollups
    /// can answer (empty when `start >= end`).
    pub fn whole_hours(&self) -> (i64, i64) {
        (
            (self.start + HOUR - 1).div_euclid(HOUR) * HOUR,
            self.end.div_euclid(HOUR) * HOUR,
        )
    }

    /// The bucket of wall-clock time `wall` (instant + offset).
    pub fn bucket_of_wall(&self, wall: i64) -> i64 {
        wall.div_euclid(self.unit.len_ms())
    }

    /// The bucket of instant `ms`.
    pub fn bucket_of(&self, ms: i64) -> i64 {
        self.bucket_of_wall(ms + offset_at(self.tz, ms))
    }

    /// Every bucket of the period, in order.
    pub fn buckets(&self) -> Vec<i64> {
        let mut out: Vec<i64> = Vec::new();
        let len = self.unit.len_ms();
        for seg in &self.segments {
            let first = (seg.start + seg.offset).div_euclid(len);
            let last = (seg.end - 1 + seg.offset).div_euclid(len);
            for b in first..=last {
                if out.last().is_none_or(|&l| l < b) {
                    out.push(b);
                } else if !out.contains(&b) {
                    // The repeated hour after clocks go back: already present.
                    out.push(b);
                    out.sort_unstable();
                }
            }
        }
        out.dedup();
        out
    }

    /// The label of bucket `b`: `YYYY/MM/DD`, `YYYY/MM/DD HH` or `YYYY/MM/DD HH:mm`.
    /// (Written out by hand: a year of day labels through `strftime` was a
    /// tenth of a year-long report.)
    pub fn label(&self, b: i64) -> String {
        let wall = b * self.unit.len_ms();
        // 1970-01-01 is day 719,163 of the common era.
        let days = i32::try_from(wall.div_euclid(DAY) + 719_163).unwrap_or_default();
        let date = NaiveDate::from_num_days_from_ce_opt(days).unwrap_or_default();
        let (y, m, d) = (date.year(), date.month(), date.day());
        let of_day = wall.rem_euclid(DAY);
        let (hour, minute) = (of_day / HOUR, of_day % HOUR / MINUTE);
        match self.unit {
            BucketUnit::Day => format!("{y:04}/{m:02}/{d:02}"),
            BucketUnit::Hour => format!("{y:04}/{m:02}/{d:02} {hour:02}"),
            BucketUnit::Minute => format!("{y:04}/{m:02}/{d:02} {hour:02}:{minute:02}"),
        }
    }

    /// Every bucket with its label, in order, each formatted once: a report
    /// looks buckets up per cell.
    pub fn labels(&self) -> Labels {
        let buckets = self.buckets();
        let labels = buckets.iter().map(|b| self.label(*b)).collect();
        Labels { buckets, labels }
    }

    /// Splits the interval `[start, end)` at bucket edges: (bucket, ms inside it),
    /// limited to the period.
    pub fn split(&self, start: i64, end: i64) -> Vec<(i64, i64)> {
        let mut out: Vec<(i64, i64)> = Vec::new();
        let len = self.unit.len_ms();
        for seg in &self.segments {
            let s = start.max(seg.start);
            let e = end.min(seg.end);
            let mut t = s;
            while t < e {
                let wall = t + seg.offset;
                let next = ((wall.div_euclid(len) + 1) * len - seg.offset).min(e);
                let b = wall.div_euclid(len);
                match out.iter_mut().find(|(ob, _)| *ob == b) {
                    Some((_, ms)) => *ms += next - t,
                    None => out.push((b, next - t)),
                }
                t = next;
            }
        }
        out
    }
}

/// The buckets of a window and their labels, in order.
#[derive(Debug, Clone)]
pub struct Labels {
    buckets: Vec<i64>,
    labels: Vec<String>,
}

impl Labels {
    /// The position of bucket `b`, if it is one of the window's.
    pub fn index(&self, b: i64) -> Option<usize> {
        self.buckets.binary_search(&b).ok()
    }

    /// Whether `b` is one of the window's buckets.
    pub fn contains(&self, b: i64) -> bool {
        self.index(b).is_some()
    }

    /// The buckets, in order.
    pub fn buckets(&self) -> &[i64] {
        &self.buckets
    }

    /// The number of buckets.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether there are no buckets.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// One value per bucket (in bucket order), keyed by label. Labels sort as
    /// their buckets do, so the map is built from an ordered list.
    pub fn keyed<V>(self, values: Vec<V>) -> BTreeMap<String, V> {
        self.labels.into_iter().zip(values).collect()
    }
}

/// Splits `[start, end)` into stretches of constant offset.
fn segments(tz: Tz, start: i64, end: i64) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut s = start;
    while s < end {
        let offset = offset_at(tz, s);
        // Walk a day at a time; when the offset differs at the day's end, find the
        // change by bisection (to the millisecond; transitions are on whole minutes).
        let mut e = s;
        loop {
            let next = (e + DAY).min(end);
            if offset_at(tz, next - 1) == offset {
                e = next;
                if e >= end {
                    break;
                }
            } else {
                let (mut lo, mut hi) = (e, next - 1);
                while hi - lo > 1 {
                    let mid = lo + (hi - lo) / 2;
                    if offset_at(tz, mid) == offset {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                e = hi;
                break;
            }
        }
        out.push(Segment {
            start: s,
            end: e,
            offset,
        });
        s = e;
    }
    out
}

/// The day label of a local date (used by tests and the demo generator).
pub fn day_label(date: NaiveDate) -> String {
    format!("{:04}/{:02}/{:02}", date.year(), date.month(), date.day())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(tz: Tz, y: i32, mo: u32, d: u32, h: u32, mi: u32) -> i64 {
        tz.with_ymd_and_hms(y, mo, d, h, mi, 0)
            .earliest()
            .unwrap()
            .timestamp_millis()
    }

    fn custom(tz: Tz, from: i64, to: i64) -> Window {
        Window::new(WindowSpec {
            grouping: Grouping::Custom,
            from: Some(from),
            to: Some(to),
            tz,
            now: to,
            first_fact: None,
            field: "dateFilter.",
        })
        .unwrap()
    }

    #[test]
    fn an_interval_across_midnight_splits_between_the_days() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let w = custom(tz, ms(tz, 2026, 11, 1, 0, 0), ms(tz, 2026, 11, 10, 0, 0));
        let parts = w.split(ms(tz, 2026, 11, 3, 23, 50), ms(tz, 2026, 11, 4, 0, 10));
        let labelled: Vec<(String, i64)> = parts.iter().map(|(b, v)| (w.label(*b), *v)).collect();
        assert_eq!(
            labelled,
            vec![("2026/11/03".to_string(), 600_000), ("2026/11/04".to_string(), 600_000)]
        );
    }

    #[test]
    fn dst_days_have_their_real_length() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        // 2026-03-29: clocks go forward (23 h); 2026-10-25: back (25 h).
        let w = custom(tz, ms(tz, 2026, 3, 28, 0, 0), ms(tz, 2026, 10, 27, 0, 0));
        assert_eq!(w.segments().len(), 3);
        let whole = |d: u32, m: u32| {
            let from = ms(tz, 2026, m, d, 0, 0);
            let to = ms(tz, 2026, m, d + 1, 0, 0);
            w.split(from, to)
        };
        let spring = whole(29, 3);
        assert_eq!(spring.len(), 1);
        assert_eq!(w.label(spring[0].0), "2026/03/29");
        assert_eq!(spring[0].1, 23 * HOUR);
        let autumn = whole(25, 10);
        assert_eq!(autumn.len(), 1);
        assert_eq!(autumn[0].1, 25 * HOUR);
        let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
        assert_eq!(labels.first().unwrap(), "2026/03/28");
        assert_eq!(labels.last().unwrap(), "2026/10/26");
        assert_eq!(labels.len(), 213);
    }

    #[test]
    fn hourly_buckets_merge_the_repeated_hour_and_skip_the_missing_one() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let w = custom(tz, ms(tz, 2026, 10, 25, 0, 0), ms(tz, 2026, 10, 26, 0, 0));
        let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
        assert_eq!(labels.len(), 24);
        let two = w
            .buckets()
            .into_iter()
            .find(|b| w.label(*b) == "2026/10/25 02")
            .unwrap();
        let parts = w.split(w.start, w.end);
        assert_eq!(parts.iter().find(|(b, _)| *b == two).unwrap().1, 2 * HOUR);
        let w = custom(tz, ms(tz, 2026, 3, 29, 0, 0), ms(tz, 2026, 3, 30, 0, 0));
        let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
        assert_eq!(labels.len(), 23);
        assert!(!labels.contains(&"2026/03/29 02".to_string()));
    }

    #[test]
    fn relative_groupings() {
        let tz: Tz = "America/New_York".parse().unwrap();
        let now = ms(tz, 2026, 11, 21, 15, 30);
        let window = |grouping| {
            Window::new(WindowSpec {
                grouping,
                from: None,
                to: None,
                tz,
                now,
                first_fact: Some(ms(tz, 2026, 11, 1, 12, 0)),
                field: "",
            })
            .unwrap()
        };
        let labels = |w: &Window| w.buckets().iter().map(|b| w.label(*b)).collect::<Vec<_>>();
        let today = window(Grouping::Today);
        assert_eq!(labels(&today).len(), 16);
        assert_eq!(labels(&today)[15], "2026/11/21 15");
        assert_eq!(labels(&window(Grouping::TodayByMinute)).len(), 15 * 60 + 30);
        assert_eq!(labels(&window(Grouping::TodayByMinute))[0], "2026/11/21 00:00");
        let week = labels(&window(Grouping::Last7Days));
        assert_eq!(week, (15..=21).map(|d| format!("2026/11/{d}")).collect::<Vec<_>>());
        let month = labels(&window(Grouping::LastMonth));
        assert_eq!(month.first().unwrap(), "2026/10/22");
        assert_eq!(month.len(), 31);
        let year = labels(&window(Grouping::LastYear));
        assert_eq!(year.first().unwrap(), "2025/11/22");
        assert_eq!(year.len(), 365);
        let all = labels(&window(Grouping::All));
        assert_eq!(all.first().unwrap(), "2026/11/01");
        assert_eq!(all.len(), 21);
    }

    #[test]
    fn bucket_sql_picks_each_segment_offset() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let w = custom(tz, ms(tz, 2026, 10, 20, 0, 0), ms(tz, 2026, 10, 30, 0, 0));
        let change = w.segments()[0].end;
        assert_eq!(
            w.bucket_sql("at"),
            format!("case when at < {change} then (at + 7200000) / 86400000 else (at + 3600000) / 86400000 end")
        );
        let summer = custom(tz, ms(tz, 2026, 7, 1, 0, 0), ms(tz, 2026, 7, 5, 0, 0));
        assert_eq!(summer.bucket_sql("at"), "(at + 7200000) / 86400000");
    }

    #[test]
    fn clipping_keeps_the_buckets() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        // Across the autumn change: two segments.
        let w = custom(tz, ms(tz, 2026, 10, 20, 0, 0), ms(tz, 2026, 10, 30, 0, 0));
        let last_day = ms(tz, 2026, 10, 29, 0, 0);
        let clipped = w.clip(ms(tz, 2026, 10, 24, 12, 0), last_day).unwrap();
        assert_eq!(clipped.segments().len(), 2);
        assert_eq!(clipped.label(clipped.bucket_of(clipped.start)), "2026/10/24");
        let labels: Vec<String> = clipped.buckets().iter().map(|b| w.label(*b)).collect();
        assert_eq!(labels.first().unwrap(), "2026/10/24");
        assert_eq!(labels.last().unwrap(), "2026/10/28");
        assert!(w.clip(w.end, w.end + 1).is_none());
    }

    #[test]
    fn half_hour_zones_are_not_hour_aligned() {
        let tz: Tz = "Asia/Kolkata".parse().unwrap();
        let w = custom(tz, ms(tz, 2026, 11, 1, 0, 0), ms(tz, 2026, 11, 5, 0, 0));
        assert!(!w.hour_aligned());
        let labels: Vec<String> = w.buckets().iter().map(|b| w.label(*b)).collect();
        assert_eq!(labels, vec!["2026/11/01", "2026/11/02", "2026/11/03", "2026/11/04"]);
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        assert!(custom(berlin, 0, DAY * 3).hour_aligned());
    }

    #[test]
    fn custom_ranges_are_checked() {
        let tz: Tz = "UTC".parse().unwrap();
        let spec = |from, to| WindowSpec {
            grouping: Grouping::Custom,
            from,
            to,
            tz,
            now: 0,
            first_fact: None,
            field: "dateFilter.",
        };
        let field = |r: CoreResult<Window>| match r.unwrap_err() {
            CoreError::Validation(errors) => errors[0].field.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(field(Window::new(spec(None, Some(1)))), "dateFilter.from");
        assert_eq!(field(Window::new(spec(Some(5), Some(1)))), "dateFilter.to");
        assert_eq!(
            field(Window::new(spec(Some(0), Some(MAX_CUSTOM_SPAN + 1)))),
            "dateFilter.to"
        );
        assert_eq!(custom(tz, 0, 48 * HOUR).unit, BucketUnit::Hour);
        assert_eq!(custom(tz, 0, 48 * HOUR + 1).unit, BucketUnit::Day);
    }
}
