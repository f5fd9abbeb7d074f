//! A report's period and its buckets, cut in an IANA time zone.
//!
//! Bucketing works in "wall-clock milliseconds": an instant plus the zone's UTC
//! offset at that instant. A bucket is `wall.div_euclid(len)` for a fixed `len`
//! (minute, hour) or the local calendar day. The period is split into *segments*
//! where the offset is constant, so each segment can bucket with one expression,
//! in SQL (`(at + offset) / len`) or in Rust; the labels of two segments that fall
//! in the same local day (a DST day) merge into one bucket of the right length.

mod zone_check;

use std::{collections::BTreeMap, sync::Arc};

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, Offset, TimeZone, Utc};
use chrono_tz::Tz;

pub(crate) use self::zone_check::ZoneCheck;
use super::api::{Grouping, MAX_TIME_MS};
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
mod tests;
