//! Daily rollups, kept in the tenant's time zone.
//!
//! Hourly rollups make a report's cost grow with the hours of its period times
//! its groups: a year split by 50 agents reads 438,000 rows. So every rollup row
//! is also added to a row for its *local day* in the tenant's zone
//! (`report_day_rollups`, `resource_day_rollups`, and the distinct visitors of
//! [`super::visitors`]). A report with day buckets in that zone reads one row per
//! day and group for its whole days, and the hourly path (with raw facts at the
//! edges) for the rest. Both add the same values, so they agree exactly; unlike
//! hourly rows, day rows need no whole-hour offset.
//!
//! `day_rollup_zones` names the zone the day rows are kept in and the instant
//! from which they are complete: the tenant's creation, or the first midnight
//! after its zone last changed (a change deletes the rows and starts afresh in the
//! new zone). Days before that come from the hourly rows. The script-error day
//! rows (see [`super::errors`]) came later: `errors_from` says from when they are
//! complete for tenants that existed before them.

use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;

use super::window::{local_midnight, BucketUnit, KeptDays, Window};
use crate::{db::Tx, error::CoreResult, ids::TenantId, with_db, with_tx, Services};

/// The instant the local day of `ms` starts in `tz`.
pub(crate) fn day_start(tz: Tz, ms: i64) -> i64 {
    let date = tz
        .timestamp_millis_opt(ms)
        .single()
        .map(|d| d.date_naive())
        .unwrap_or(NaiveDate::MIN);
    local_midnight(tz, date)
}

/// The first instant after `now` at which a local day starts in `zone`.
pub(crate) fn next_midnight(zone: Tz, now: i64) -> i64 {
    let today = day_start(zone, now);
    // A local day is 23 to 25 hours long; 26 hours on is always the next day.
    day_start(zone, today + 26 * 3_600_000)
}

/// The first local midnight at or after `ms`.
fn midnight_at_or_after(zone: Tz, ms: i64) -> i64 {
    if day_start(zone, ms) == ms {
        ms
    } else {
        next_midnight(zone, ms)
    }
}

/// The zone a tenant's day rollups are kept in, read in the writing transaction
/// so that a fact and a zone change never interleave.
pub(crate) async fn rollup_zone(tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<Tz> {
    let zone: Option<String> = with_tx!(tx, |conn| sqlx::query_scalar(
        "select zone from day_rollup_zones where tenant_id = $1"
    )
    .bind(tenant_id)
    .fetch_optional(conn)
    .await)?;
    Ok(zone.and_then(|z| z.parse().ok()).unwrap_or(chrono_tz::UTC))
}

/// Starts the day rollups afresh in `zone`, complete from `complete_from` (a new
/// tenant: its creation; a changed zone: the next local midnight).
pub(crate) async fn reset_day_rollups(
    tx: &mut Tx,
    tenant_id: &TenantId,
    zone: Tz,
    complete_from: i64,
) -> CoreResult<()> {
    with_tx!(tx, |conn| {
        for sql in [
            "delete from visitor_days where tenant_id = $1",
            "delete from error_visitor_days where tenant_id = $1",
            "delete from report_day_rollups where tenant_id = $1",
            "delete from resource_day_rollups where tenant_id = $1",
            "delete from day_rollup_zones where tenant_id = $1",
        ] {
            sqlx::query(sql).bind(tenant_id).execute(&mut *conn).await?;
        }
        sqlx::query("insert into day_rollup_zones (tenant_id, zone, complete_from) values ($1, $2, $3)")
            .bind(tenant_id)
            .bind(zone.name())
            .bind(complete_from)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected())
    })?;
    Ok(())
}

impl Services {
    /// The whole local days of `window` that day rollups answer, `[start, end)`,
    /// or `None`: the buckets must be days in the zone the rows are kept in, and
    /// the days must lie after the rows became complete.
    pub(crate) async fn day_span(&self, tenant_id: &TenantId, window: &Window) -> CoreResult<Option<(i64, i64)>> {
        self.kept_day_span(tenant_id, window, false).await
    }

    /// [`Self::day_span`] for the script-error day rows, which may have started
    /// later (see [`super::errors`]).
    pub(crate) async fn error_day_span(&self, tenant_id: &TenantId, window: &Window) -> CoreResult<Option<(i64, i64)>> {
        self.kept_day_span(tenant_id, window, true).await
    }

    async fn kept_day_span(
        &self,
        tenant_id: &TenantId,
        window: &Window,
        errors: bool,
    ) -> CoreResult<Option<(i64, i64)>> {
        if window.unit != BucketUnit::Day {
            return Ok(None);
        }
        let (complete_from, errors_from) = match window.kept_days {
            KeptDays::Kept {
                complete_from,
                errors_from,
            } => (complete_from, errors_from),
            KeptDays::Absent => return Ok(None),
            KeptDays::Unread => {
                let kept: Option<(String, i64, i64)> = with_db!(self.db(), |pool| sqlx::query_as(
                    "select zone, complete_from, errors_from from day_rollup_zones where tenant_id = $1"
                )
                .bind(tenant_id)
                .fetch_optional(pool)
                .await)?;
                match kept {
                    Some((zone, complete_from, errors_from)) if zone == window.tz.name() => {
                        (complete_from, errors_from)
                    }
                    _ => return Ok(None),
                }
            }
        };
        let complete_from = if errors {
            complete_from.max(errors_from)
        } else {
            complete_from
        };
        let start = midnight_at_or_after(window.tz, window.start.max(complete_from));
        let end = day_start(window.tz, window.end);
        Ok((start < end).then_some((start, end)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(tz: Tz, y: i32, m: u32, d: u32, h: u32) -> i64 {
        tz.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap().timestamp_millis()
    }

    #[test]
    fn days_start_at_local_midnight() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        assert_eq!(
            day_start(berlin, ms(berlin, 2026, 3, 29, 23)),
            ms(berlin, 2026, 3, 29, 0)
        );
        assert_eq!(
            day_start(berlin, ms(berlin, 2026, 3, 29, 0)),
            ms(berlin, 2026, 3, 29, 0)
        );
        // The 23-hour day of the spring change: the next midnight is 23 h on.
        let start = ms(berlin, 2026, 3, 29, 0);
        assert_eq!(next_midnight(berlin, start + 1), start + 23 * 3_600_000);
        // The 25-hour autumn day.
        let start = ms(berlin, 2026, 10, 25, 0);
        assert_eq!(next_midnight(berlin, start), start + 25 * 3_600_000);
        assert_eq!(midnight_at_or_after(berlin, start), start);
        assert_eq!(midnight_at_or_after(berlin, start + 1), start + 25 * 3_600_000);
    }

    #[test]
    fn half_hour_zones_have_midnights_inside_utc_hours() {
        let kolkata: Tz = "Asia/Kolkata".parse().unwrap();
        let midnight = ms(kolkata, 2026, 5, 4, 0);
        assert_eq!(midnight.rem_euclid(3_600_000), 1_800_000);
        assert_eq!(day_start(kolkata, midnight + 5), midnight);
    }
}
