//! When opening hours are open, and deadlines that count open time only.
//!
//! A [`Schedule`] is read from [`OpeningHours`] (see that module for the model) and
//! answers four questions without touching the database: is it open at an instant,
//! when does that next change, when has a given amount of open time passed (an SLA
//! deadline whose clock runs only while open), and how much open time lies between
//! two instants.
//!
//! How the hours are read:
//! - **Wall-clock intervals.** An interval `09:00–18:00` on a day means every instant
//!   whose local date is that day and whose local time of day is in `[09:00, 18:00)`
//!   (half-open: open at 09:00, closed at 18:00). Local means in the hours' zone.
//!   An end of `23:59` runs to midnight, because `24:00` cannot be written and
//!   nobody means "closed for the last minute of the day".
//! - **Daylight saving time** follows from that definition. On the spring-forward day
//!   local times in the gap do not exist, so Berlin's `01:30–03:30` on 29 March 2026
//!   is open one hour (01:30–02:00 CET, then 03:00–03:30 CEST). On the fall-back day
//!   the repeated hour is open on both passes, so `01:30–03:30` on 25 October 2026 is
//!   open three hours.
//! - **Several intervals a day** are allowed; overlapping or touching intervals of a
//!   day merge. `EVERYDAY`, `WORKDAYS` (Monday–Friday), `WEEKEND` and single days
//!   combine.
//! - **Holidays** close whole local days, from the first to the last date, whatever
//!   the weekday intervals say. The dates are `from`/`to` when given, else the
//!   calendar dates of `fromDate`/`toDate` as written in UTC (the date the validator
//!   compares `from` with). A `fixedDate` holiday recurs every year on the same
//!   month and day (a range may wrap over New Year); others happen once.
//! - **Zone**: the IANA `timezone` when given, else the fixed `timezoneOffset`
//!   (minutes east of UTC), else UTC.
//!
//! Searches look ahead at most [`HORIZON_DAYS`]; hours that never open within it
//! give `None`. The work is per open interval and per day (a handful of zone
//! lookups a day), never per minute.

use std::collections::VecDeque;

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, Offset, TimeZone, Utc};
use chrono_tz::Tz;

use super::{Holiday, OpeningHours, TimeOfDay, Weekday};

/// How far ahead [`Schedule::next_change`] and [`Schedule::add_open_time`] look:
/// two years.
pub const HORIZON_DAYS: i64 = 731;

const DAY_SECS: i64 = 86_400;
const HOUR_SECS: i64 = 3_600;
/// Wider than any UTC offset (±14 h today, ±15:xx in old local mean times), so that
/// every instant of a local day lies within this much of its naive midnight.
const OFFSET_MARGIN_SECS: i64 = 16 * HOUR_SECS;
/// Zone offsets are sampled this often when a day's offset changes are looked for;
/// no zone changes its offset twice within this time.
const SAMPLE_SECS: i64 = 6 * HOUR_SECS;

/// The zone the hours are kept in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Zone {
    Named(Tz),
    Fixed(FixedOffset),
}

impl Zone {
    /// Seconds east of UTC at the instant `unix_secs`.
    fn offset_at(self, unix_secs: i64) -> i64 {
        match self {
            Zone::Fixed(offset) => offset.local_minus_utc().into(),
            Zone::Named(tz) => match DateTime::from_timestamp(unix_secs, 0) {
                Some(at) => tz
                    .offset_from_utc_datetime(&at.naive_utc())
                    .fix()
                    .local_minus_utc()
                    .into(),
                None => 0,
            },
        }
    }

    /// The instants in `(from, to]` at which the offset changes, found by bisection
    /// down to the second wherever the offsets at two ends differ.
    fn changes(self, from: i64, to: i64, out: &mut Vec<i64>) {
        if self.offset_at(from) == self.offset_at(to) {
            return;
        }
        if to - from <= 1 {
            out.push(to);
            return;
        }
        let mid = from + (to - from) / 2;
        self.changes(from, mid, out);
        self.changes(mid, to, out);
    }
}

/// Recurring (month, day) ranges of `fixedDate` holidays, inclusive; `start > end`
/// wraps over New Year.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Yearly {
    Every,
    Range((u32, u32), (u32, u32)),
}

/// Opening hours, ready to answer questions about instants. Build one with
/// [`Schedule::new`] (or `From<&OpeningHours>`), or [`Schedule::always`] for "no
/// opening hours". All instants are UTC; results keep millisecond precision.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    zone: Zone,
    /// Per weekday (Monday = 0), sorted disjoint `[start, end)` seconds after local
    /// midnight.
    week: [Vec<(i64, i64)>; 7],
    /// One-off days off, inclusive.
    days_off: Vec<(NaiveDate, NaiveDate)>,
    /// Days off every year.
    yearly: Vec<Yearly>,
    /// Open at every instant, whatever the above say.
    always: bool,
}

fn seconds_of(t: TimeOfDay, is_end: bool) -> i64 {
    let (hour, minute) = (i64::from(t.hour.clamp(0, 23)), i64::from(t.minute.clamp(0, 59)));
    if is_end && hour == 23 && minute == 59 {
        DAY_SECS
    } else {
        hour * HOUR_SECS + minute * 60
    }
}

/// The days (0 = Monday) a [`Weekday`] value stands for.
pub(crate) fn days_of(weekday: Weekday) -> &'static [usize] {
    match weekday {
        Weekday::Everyday => &[0, 1, 2, 3, 4, 5, 6],
        Weekday::Workdays => &[0, 1, 2, 3, 4],
        Weekday::Weekend => &[5, 6],
        Weekday::Monday => &[0],
        Weekday::Tuesday => &[1],
        Weekday::Wednesday => &[2],
        Weekday::Thursday => &[3],
        Weekday::Friday => &[4],
        Weekday::Saturday => &[5],
        Weekday::Sunday => &[6],
    }
}

/// A holiday's first and last date (see the module docs), if it names any.
fn holiday_dates(h: &Holiday) -> Option<(NaiveDate, NaiveDate)> {
    let date = |parts: Option<super::DateParts>, at: Option<DateTime<Utc>>| match parts {
        Some(p) => NaiveDate::from_ymd_opt(p.year, p.month, p.day),
        None => at.map(|at| at.date_naive()),
    };
    let from = date(h.from, h.from_date)?;
    let to = match (h.to, h.to_date) {
        (None, None) => from,
        (parts, at) => date(parts, at)?,
    };
    (to >= from).then_some((from, to))
}

/// The naive (zone-less) unix seconds of a local date's midnight.
fn midnight(date: NaiveDate) -> i64 {
    date.and_hms_opt(0, 0, 0).map_or(0, |d| d.and_utc().timestamp())
}

fn to_ms(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis()
}

fn from_ms(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

impl From<&OpeningHours> for Schedule {
    fn from(hours: &OpeningHours) -> Self {
        Schedule::new(hours)
    }
}

impl Schedule {
    /// The schedule of `hours`. Never fails: stored hours were validated, and
    /// anything still out of range is clamped (an unknown zone name falls back to
    /// `timezoneOffset`, then UTC).
    pub fn new(hours: &OpeningHours) -> Schedule {
        let named = hours.timezone.as_deref().and_then(|z| z.parse::<Tz>().ok());
        let fixed = hours
            .timezone_offset
            .and_then(|minutes| FixedOffset::east_opt(minutes.clamp(-840, 840) * 60));
        let zone = match (named, fixed) {
            (Some(tz), _) => Zone::Named(tz),
            (None, Some(offset)) => Zone::Fixed(offset),
            (None, None) => Zone::Named(Tz::UTC),
        };
        let mut week: [Vec<(i64, i64)>; 7] = Default::default();
        for c in &hours.conditions {
            let (start, end) = (seconds_of(c.start_hours, false), seconds_of(c.end_hours, true));
            if end > start {
                for &day in days_of(c.weekday) {
                    week[day].push((start, end));
                }
            }
        }
        for day in &mut week {
            day.sort_unstable();
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(day.len());
            for &(s, e) in day.iter() {
                match merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            *day = merged;
        }
        let mut days_off = Vec::new();
        let mut yearly = Vec::new();
        for h in &hours.holidays {
            let Some((from, to)) = holiday_dates(h) else { continue };
            if h.fixed_date == Some(true) {
                if (to - from).num_days() >= 365 {
                    yearly.push(Yearly::Every);
                } else {
                    yearly.push(Yearly::Range((from.month(), from.day()), (to.month(), to.day())));
                }
            } else {
                days_off.push((from, to));
            }
        }
        Schedule {
            zone,
            week,
            days_off,
            yearly,
            always: false,
        }
    }

    /// A schedule that is open at every instant: what "no opening hours" means
    /// (for example a tenant without business hours, whose SLA clocks run around
    /// the clock).
    pub fn always() -> Schedule {
        Schedule {
            zone: Zone::Named(Tz::UTC),
            week: Default::default(),
            days_off: Vec::new(),
            yearly: Vec::new(),
            always: true,
        }
    }

    /// The zone's name: the IANA name (`Europe/Berlin`), or for a fixed offset
    /// `UTC+05:30`.
    pub fn zone_name(&self) -> String {
        match self.zone {
            Zone::Named(tz) => tz.name().to_string(),
            Zone::Fixed(offset) => format!("UTC{offset}"),
        }
    }

    /// `at` as local date and time in the hours' zone, with its UTC offset.
    pub fn local(&self, at: DateTime<Utc>) -> DateTime<FixedOffset> {
        let offset = self.zone.offset_at(at.timestamp());
        let fixed = i32::try_from(offset)
            .ok()
            .and_then(FixedOffset::east_opt)
            .unwrap_or_else(|| Utc.fix());
        at.with_timezone(&fixed)
    }

    /// Whether the whole local day `date` is off (a holiday).
    fn is_day_off(&self, date: NaiveDate) -> bool {
        if self.days_off.iter().any(|&(from, to)| from <= date && date <= to) {
            return true;
        }
        let md = (date.month(), date.day());
        self.yearly.iter().any(|y| match *y {
            Yearly::Every => true,
            Yearly::Range(start, end) if start <= end => start <= md && md <= end,
            Yearly::Range(start, end) => md >= start || md <= end,
        })
    }

    /// The weekly intervals (seconds after local midnight) that apply on `date`.
    fn intervals_on(&self, date: NaiveDate) -> &[(i64, i64)] {
        if self.is_day_off(date) {
            &[]
        } else {
            &self.week[date.weekday().num_days_from_monday() as usize]
        }
    }

    /// Whether nothing is ever open (no weekly interval at all).
    fn never_opens(&self) -> bool {
        !self.always && self.week.iter().all(Vec::is_empty)
    }

    /// Whether the hours are open at `at`: `at`'s local date is no holiday and its
    /// local time of day lies in one of that weekday's intervals (start included,
    /// end excluded). [`Schedule::always`] is always open.
    pub fn is_open(&self, at: DateTime<Utc>) -> bool {
        if self.always {
            return true;
        }
        let secs = at.timestamp();
        let local = secs + self.zone.offset_at(secs);
        let Some(date) = DateTime::from_timestamp(local, 0).map(|d| d.date_naive()) else {
            return false;
        };
        let time_of_day = local.rem_euclid(DAY_SECS);
        self.intervals_on(date)
            .iter()
            .any(|&(s, e)| s <= time_of_day && time_of_day < e)
    }

    /// The open instants of local day `date` as UTC `[start, end)` milliseconds,
    /// in order: each weekday interval is mapped through every stretch of constant
    /// UTC offset that the day overlaps, so gaps open nothing and folds open twice.
    fn day_pieces(&self, date: NaiveDate, out: &mut VecDeque<(i64, i64)>) {
        let intervals = self.intervals_on(date);
        if intervals.is_empty() {
            return;
        }
        let local_midnight = midnight(date);
        let (lo, hi) = (
            local_midnight - OFFSET_MARGIN_SECS,
            local_midnight + DAY_SECS + OFFSET_MARGIN_SECS,
        );
        // Stretches of constant offset covering [lo, hi).
        let mut changes = Vec::new();
        if let Zone::Named(_) = self.zone {
            let mut at = lo;
            while at < hi {
                let next = (at + SAMPLE_SECS).min(hi);
                self.zone.changes(at, next, &mut changes);
                at = next;
            }
        }
        let mut bounds = Vec::with_capacity(changes.len() + 2);
        bounds.push(lo);
        bounds.extend(changes);
        bounds.push(hi);
        let mut pieces: Vec<(i64, i64)> = Vec::new();
        for stretch in bounds.windows(2) {
            let (from, to) = (stretch[0], stretch[1]);
            let offset = self.zone.offset_at(from);
            for &(s, e) in intervals {
                let start = (local_midnight + s - offset).max(from);
                let end = (local_midnight + e - offset).min(to);
                if start < end {
                    pieces.push((start * 1000, end * 1000));
                }
            }
        }
        pieces.sort_unstable();
        out.extend(pieces);
    }

    /// The open intervals (UTC milliseconds, merged where they touch, in order)
    /// of the local days from the day before `from_ms`'s to `until_ms`'s day after.
    fn walk(&self, from_ms: i64, until_ms: i64) -> Walk<'_> {
        let day_of = |ms: i64| {
            let secs = ms.div_euclid(1000);
            DateTime::from_timestamp(secs + self.zone.offset_at(secs), 0).map(|d| d.date_naive())
        };
        let first = day_of(from_ms).and_then(|d| d.pred_opt());
        let last = day_of(until_ms).and_then(|d| d.succ_opt());
        Walk {
            schedule: self,
            day: first,
            last: last.unwrap_or(NaiveDate::MIN),
            queue: VecDeque::new(),
            pending: None,
        }
    }

    /// When the hours next open or close after `at`: the first instant later than
    /// `at` at which [`Schedule::is_open`] differs from `is_open(at)`. While open that
    /// is the end of the current interval (intervals that touch, also across
    /// midnight or a DST gap, count as one); while closed, the start of the next.
    /// `None` when that does not happen within [`HORIZON_DAYS`] (always open, never
    /// open, or open for longer than that).
    pub fn next_change(&self, at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.always || self.never_opens() {
            return None;
        }
        let now = to_ms(at);
        let limit = now.checked_add(HORIZON_DAYS * DAY_SECS * 1000)?;
        for (start, end) in self.walk(now, limit) {
            let change = if start > now {
                start
            } else if end > now {
                end
            } else {
                continue;
            };
            return if change < limit { from_ms(change) } else { None };
        }
        None
    }

    /// The instant at which `seconds` of open time have passed since `start`: an SLA
    /// deadline whose clock runs only while the hours are open. Closed time (nights,
    /// weekends, holidays) does not count. The result is the earliest such instant,
    /// so a deadline that is reached exactly at closing time is that closing time.
    /// `seconds <= 0` gives `start`. `None` when that much open time does not pass
    /// within [`HORIZON_DAYS`] after `start`. [`Schedule::always`] gives
    /// `start + seconds`.
    pub fn add_open_time(&self, start: DateTime<Utc>, seconds: i64) -> Option<DateTime<Utc>> {
        if seconds <= 0 {
            return Some(start);
        }
        let from = to_ms(start);
        let mut left = seconds.checked_mul(1000)?;
        let limit = from.checked_add(HORIZON_DAYS * DAY_SECS * 1000)?;
        if self.always {
            return from.checked_add(left).filter(|&t| t <= limit).and_then(from_ms);
        }
        if self.never_opens() {
            return None;
        }
        for (s, e) in self.walk(from, limit) {
            let s = s.max(from);
            if e <= s {
                continue;
            }
            if s > limit {
                return None;
            }
            if e - s >= left {
                let due = s + left;
                return if due <= limit { from_ms(due) } else { None };
            }
            left -= e - s;
        }
        None
    }

    /// Open time within `[a, b)`, in whole seconds (rounded down); 0 when `b <= a`.
    /// [`Schedule::always`] gives the whole span.
    pub fn open_seconds_between(&self, a: DateTime<Utc>, b: DateTime<Utc>) -> i64 {
        let (from, to) = (to_ms(a), to_ms(b));
        if to <= from {
            return 0;
        }
        if self.always {
            return (to - from) / 1000;
        }
        if self.never_opens() {
            return 0;
        }
        let mut total = 0;
        for (s, e) in self.walk(from, to) {
            if s >= to {
                break;
            }
            let (s, e) = (s.max(from), e.min(to));
            if e > s {
                total += e - s;
            }
        }
        total / 1000
    }
}

/// The open intervals of a run of local days, merged and in order.
struct Walk<'a> {
    schedule: &'a Schedule,
    /// The next day to read; `None` once past the last representable date.
    day: Option<NaiveDate>,
    last: NaiveDate,
    queue: VecDeque<(i64, i64)>,
    /// The interval being grown while the next pieces touch it.
    pending: Option<(i64, i64)>,
}

impl Iterator for Walk<'_> {
    type Item = (i64, i64);

    fn next(&mut self) -> Option<(i64, i64)> {
        loop {
            if let Some((s, e)) = self.queue.pop_front() {
                match &mut self.pending {
                    Some(p) if s <= p.1 => p.1 = p.1.max(e),
                    Some(p) => return Some(std::mem::replace(p, (s, e))),
                    None => self.pending = Some((s, e)),
                }
                continue;
            }
            match self.day {
                Some(day) if day <= self.last => {
                    self.schedule.day_pieces(day, &mut self.queue);
                    self.day = day.succ_opt();
                }
                _ => return self.pending.take(),
            }
        }
    }
}

#[cfg(test)]
mod tests;
