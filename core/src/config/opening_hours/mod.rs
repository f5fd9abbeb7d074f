//! Opening hours (spec 2.4): weekly intervals plus holidays, in a time zone.
//!
//! Decisions where the spec is silent:
//! - condition `type` is `WEEKDAY` (a weekly recurring interval); `weekday` is one of
//!   `EVERYDAY`, `WORKDAYS` (Monday–Friday), `WEEKEND`, or a day `MONDAY`…`SUNDAY`;
//!   a day may have several intervals;
//! - `startHours`/`endHours` are `{hour 0–23, minute 0–59}`, end after start;
//! - a holiday gives its range as date-times (`fromDate`/`toDate`) or as calendar
//!   dates (`from`/`to`), or both when they agree; `countryCode` is ISO 3166 alpha-2;
//! - `timezoneOffset` is minutes east of UTC (−840…840); our extension `timezone`, an
//!   IANA zone, wins when both are given because it follows daylight saving time;
//!   with neither the hours are in UTC.
//!
//! How they are read (by [`schedule::Schedule`], which documents the
//! details): intervals are local wall-clock times, half-open `[start, end)`, and an
//! end of `23:59` runs to midnight; a holiday closes whole local days from its first
//! to its last date (`from`/`to`, else the UTC calendar dates of
//! `fromDate`/`toDate`), every year when `fixedDate`; holidays win over weekdays.
//! [`Services::opening_hours_state`] says whether they are open at an instant and
//! when that next changes.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};

use super::{ConfigKind, Meta};
pub mod schedule;

use crate::{
    audit::Actor,
    error::{CoreError, CoreResult},
    ids::TenantId,
    validate::Checks,
    Services,
};
use schedule::Schedule;

/// Opening hours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "Office", "timezone": "Europe/Berlin", "conditions": [{"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 9, "minute": 0}, "endHours": {"hour": 12, "minute": 30}}, {"type": "WEEKDAY", "weekday": "WORKDAYS", "startHours": {"hour": 13, "minute": 30}, "endHours": {"hour": 18, "minute": 0}}], "holidays": [{"name": "Christmas", "from": {"year": 2026, "month": 12, "day": 24}, "to": {"year": 2026, "month": 12, "day": 26}, "countryCode": "DE", "fixedDate": true}]}))]
pub struct OpeningHours {
    /// Id and timestamps.
    #[serde(flatten)]
    pub meta: Meta,
    /// Name (at most 200 characters); default "Opening hours".
    #[schema(max_length = 200)]
    pub name: Option<String>,
    /// Minutes east of UTC (−840…840), for clients without time zone names.
    #[schema(minimum = -840, maximum = 840)]
    pub timezone_offset: Option<i32>,
    /// IANA time zone, e.g. `Europe/Berlin` (our extension; wins over `timezoneOffset`).
    #[schema(example = "Europe/Berlin")]
    pub timezone: Option<String>,
    /// Weekly intervals (at most 100).
    #[serde(default)]
    #[schema(max_items = 100)]
    pub conditions: Vec<OpeningCondition>,
    /// Days off (at most 500).
    #[serde(default)]
    #[schema(max_items = 500)]
    pub holidays: Vec<Holiday>,
}

/// Whether opening hours are open at an instant, and when that next changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"open": true, "nextChangeAt": "2026-03-30T16:00:00Z"}))]
pub struct OpeningHoursState {
    /// Whether they are open at the instant asked about.
    pub open: bool,
    /// When they next close (if open) or open (if closed); `null` when that does not
    /// happen within two years (always open, or never open in that time).
    pub next_change_at: Option<DateTime<Utc>>,
}

/// One weekly interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpeningCondition {
    /// `WEEKDAY`.
    #[serde(rename = "type")]
    pub kind: OpeningConditionType,
    /// The day or days.
    pub weekday: Weekday,
    /// Start of the interval.
    pub start_hours: TimeOfDay,
    /// End of the interval (after the start).
    pub end_hours: TimeOfDay,
}

/// Kind of opening-hours condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OpeningConditionType {
    /// A weekly recurring interval.
    Weekday,
}

/// Days an interval applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Weekday {
    /// Every day.
    Everyday,
    /// Monday to Friday.
    Workdays,
    /// Saturday and Sunday.
    Weekend,
    /// Monday.
    Monday,
    /// Tuesday.
    Tuesday,
    /// Wednesday.
    Wednesday,
    /// Thursday.
    Thursday,
    /// Friday.
    Friday,
    /// Saturday.
    Saturday,
    /// Sunday.
    Sunday,
}

/// A time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TimeOfDay {
    /// 0–23.
    #[schema(minimum = 0, maximum = 23)]
    pub hour: i32,
    /// 0–59.
    #[schema(minimum = 0, maximum = 59)]
    pub minute: i32,
}

/// A calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DateParts {
    /// Year, e.g. 2026.
    #[schema(minimum = 1, maximum = 9999)]
    pub year: i32,
    /// 1–12.
    #[schema(minimum = 1, maximum = 12)]
    pub month: u32,
    /// 1–31, valid for the month.
    #[schema(minimum = 1, maximum = 31)]
    pub day: u32,
}

/// A day or range of days off: `fromDate` or `from` is required; without `toDate`
/// and `to` it is one day. When both forms are given they must name the same day.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Holiday {
    /// Start, as a date-time: its UTC day is the first day, unless `from` is given.
    pub from_date: Option<DateTime<Utc>>,
    /// End, as a date-time: its UTC day is the last day, unless `to` is given.
    pub to_date: Option<DateTime<Utc>>,
    /// Start, as a calendar date. When given, it names the first day, and
    /// `fromDate` is kept as sent.
    pub from: Option<DateParts>,
    /// End, as a calendar date. When given, it names the last day, and `toDate`
    /// is kept as sent. Neither end given: the holiday is one day.
    pub to: Option<DateParts>,
    /// Name, e.g. "New Year" (at most 200 characters).
    #[schema(max_length = 200)]
    pub name: Option<String>,
    /// ISO 3166 alpha-2 country, e.g. `DE`.
    #[schema(pattern = "^[A-Z]{2}$", example = "DE")]
    pub country_code: Option<String>,
    /// Whether it falls on the same date every year.
    pub fixed_date: Option<bool>,
    /// Whether it was imported from a holiday calendar.
    pub imported: Option<bool>,
}

impl Holiday {
    /// A start is required, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        let given =
            |field: &str| serde_json::json!({"required": [field], "not": {"properties": {field: {"type": "null"}}}});
        serde_json::json!([{"anyOf": [given("fromDate"), given("from")]}])
    }
}

impl ConfigKind for OpeningHours {
    const KIND: &'static str = "openinghours";
    const LABEL: &'static str = "opening hours";
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_default()
    }
}

fn date_of(checks: &mut Checks, field: &str, parts: DateParts) -> Option<NaiveDate> {
    let date = NaiveDate::from_ymd_opt(parts.year, parts.month, parts.day);
    if date.is_none() {
        checks.push(field, "invalid_date", format!("{field} is not a calendar date"));
    }
    date
}

fn validate(input: &mut OpeningHours) -> CoreResult<()> {
    let mut checks = Checks::new();
    input.name = Some(
        checks
            .optional_text("name", input.name.as_deref(), 200)
            .unwrap_or_else(|| "Opening hours".to_string()),
    );
    if let Some(offset) = input.timezone_offset {
        checks.in_range("timezoneOffset", offset.into(), -840..=840);
    }
    if let Some(tz) = input.timezone.as_deref() {
        checks.timezone("timezone", tz);
    }
    if input.conditions.len() > 100 {
        checks.push("conditions", "too_many", "conditions may hold at most 100 items");
    }
    for (i, c) in input.conditions.iter().enumerate() {
        for (name, t) in [("startHours", c.start_hours), ("endHours", c.end_hours)] {
            checks.in_range(&format!("conditions[{i}].{name}.hour"), t.hour.into(), 0..=23);
            checks.in_range(&format!("conditions[{i}].{name}.minute"), t.minute.into(), 0..=59);
        }
        if c.end_hours <= c.start_hours {
            checks.push(
                &format!("conditions[{i}].endHours"),
                "before_start",
                "endHours must be after startHours",
            );
        }
    }
    if input.holidays.len() > 500 {
        checks.push("holidays", "too_many", "holidays may hold at most 500 items");
    }
    for (i, h) in input.holidays.iter_mut().enumerate() {
        let at = format!("holidays[{i}]");
        let from = match (h.from_date, h.from) {
            // The calendar date names the day whenever it is given (as the
            // schedule reads it): an instant's day depends on the zone.
            (_, Some(parts)) => date_of(&mut checks, &format!("{at}.from"), parts),
            (Some(dt), None) => Some(dt.date_naive()),
            (None, None) => {
                checks.push(&format!("{at}.fromDate"), "required", "give fromDate or from");
                None
            }
        };
        let to = match (h.to_date, h.to) {
            // The calendar date names the day whenever it is given (as the
            // schedule reads it): an instant's day depends on the zone.
            (_, Some(parts)) => date_of(&mut checks, &format!("{at}.to"), parts),
            (Some(dt), None) => Some(dt.date_naive()),
            (None, None) => from,
        };
        if let (Some(f), Some(t)) = (from, to) {
            if t < f {
                checks.push(
                    &format!("{at}.to"),
                    "before_start",
                    "a holiday cannot end before it starts",
                );
            }
        }
        h.name = checks.optional_text(&format!("{at}.name"), h.name.as_deref(), 200);
        if let Some(cc) = h.country_code.as_deref() {
            if cc.len() != 2 || !cc.bytes().all(|b| b.is_ascii_uppercase()) {
                checks.push(
                    &format!("{at}.countryCode"),
                    "invalid_country",
                    "countryCode must be ISO 3166 alpha-2, e.g. DE",
                );
            }
        }
    }
    checks.finish()
}

impl Services {
    /// Creates or overrides opening hours (spec: create/override).
    pub async fn save_opening_hours(
        &self,
        tenant_id: &TenantId,
        mut input: OpeningHours,
        actor: &Actor,
    ) -> CoreResult<OpeningHours> {
        validate(&mut input)?;
        self.config_write(tenant_id, input, actor).await
    }

    /// The schedule of the tenant's opening hours `id` (404 when it has none by
    /// that id).
    pub(crate) async fn opening_hours_schedule(&self, tenant_id: &TenantId, id: &str) -> CoreResult<Schedule> {
        Ok(Schedule::new(&self.config_get::<OpeningHours>(tenant_id, id).await?))
    }

    /// Whether the tenant's opening hours `id` are open at `at`, and when that next
    /// changes (see [`Schedule::is_open`] and [`Schedule::next_change`]).
    pub async fn opening_hours_state(
        &self,
        tenant_id: &TenantId,
        id: &str,
        at: DateTime<Utc>,
    ) -> CoreResult<OpeningHoursState> {
        let schedule = self.opening_hours_schedule(tenant_id, id).await?;
        Ok(OpeningHoursState {
            open: schedule.is_open(at),
            next_change_at: schedule.next_change(at),
        })
    }
}

impl Services {
    /// The tenant's business hours as a schedule (SLA clocks run on it, and the
    /// widget and calls ask whether it is open now), or around the clock when
    /// it has none or they are gone.
    pub(crate) async fn business_schedule(
        &self,
        tenant_id: &TenantId,
        business_hours_id: Option<&str>,
    ) -> CoreResult<Schedule> {
        let Some(id) = business_hours_id else {
            return Ok(Schedule::always());
        };
        match self.config_get::<OpeningHours>(tenant_id, id).await {
            Ok(hours) => Ok(Schedule::new(&hours)),
            Err(CoreError::NotFound(_)) => Ok(Schedule::always()),
            Err(e) => Err(e),
        }
    }
}
