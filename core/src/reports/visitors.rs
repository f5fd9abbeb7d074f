//! Distinct visitors per local day, counted as visits arrive.
//!
//! Unique visitors do not add up: a day's count is not the sum of its hours'. The
//! hourly rollups keep one row per visitor and hour, which is exact for any zone
//! but grows with the traffic. So each visit also marks its visitor seen on its
//! day in the tenant's time zone (`visitor_days`, once per visitor and day) and
//! counts that day's distinct visitors in a rollup row (`VISITOR_DAY`, keyed by
//! the zone). A daily report in that zone then reads one row per day.
//!
//! The counts are complete from `visitor_day_zones.complete_from`: the tenant's
//! creation, or the first midnight after its zone last changed (a change starts
//! the counts afresh, in the new zone). Earlier days, other zones, hourly buckets
//! and filtered requests use the hourly rows.

use chrono::{NaiveDate, TimeZone};
use chrono_tz::Tz;

use super::window::{BucketUnit, Window};
use crate::{db::Tx, error::CoreResult, with_db, with_tx, Services};

/// The rollup kind of the per-day distinct counts.
const VISITOR_DAY: &str = "VISITOR_DAY";

/// The instant the local day of `ms` starts in `tz`.
pub(crate) fn day_start(tz: Tz, ms: i64) -> i64 {
    let date = tz
        .timestamp_millis_opt(ms)
        .single()
        .map(|d| d.date_naive())
        .unwrap_or(NaiveDate::MIN);
    super::window::local_midnight(tz, date)
}

/// Marks `visitor` seen on the local day of `at` in `zone`, counting them once per
/// day.
pub(crate) async fn mark_visitor_day(
    tx: &mut Tx,
    tenant_id: &str,
    zone: Tz,
    visitor_id: &str,
    at: i64,
) -> CoreResult<()> {
    let day = day_start(zone, at);
    let first_today = with_tx!(tx, |conn| sqlx::query(
        "insert into visitor_days (tenant_id, zone, day_start, visitor_id) values ($1, $2, $3, $4) \
         on conflict (tenant_id, zone, day_start, visitor_id) do nothing"
    )
    .bind(tenant_id)
    .bind(zone.name())
    .bind(day)
    .bind(visitor_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    if first_today == 1 {
        with_tx!(tx, |conn| sqlx::query(
            "insert into report_rollups (tenant_id, kind, group_kind, hour, group_key, total, samples) \
             values ($1, $2, 'ZONE', $3, $4, 0, 1) \
             on conflict (tenant_id, kind, group_kind, hour, group_key) do update \
             set samples = report_rollups.samples + 1"
        )
        .bind(tenant_id)
        .bind(VISITOR_DAY)
        .bind(day)
        .bind(zone.name())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
    }
    Ok(())
}

/// Starts the day counts afresh in `zone`, complete from `complete_from` (a new
/// tenant: its creation; a changed zone: the next local midnight).
pub(crate) async fn reset_visitor_days(tx: &mut Tx, tenant_id: &str, zone: Tz, complete_from: i64) -> CoreResult<()> {
    with_tx!(tx, |conn| {
        for sql in [
            "delete from visitor_days where tenant_id = $1",
            "delete from report_rollups where tenant_id = $1 and kind = 'VISITOR_DAY'",
            "delete from visitor_day_zones where tenant_id = $1",
        ] {
            sqlx::query(sql).bind(tenant_id).execute(&mut *conn).await?;
        }
        sqlx::query("insert into visitor_day_zones (tenant_id, zone, complete_from) values ($1, $2, $3)")
            .bind(tenant_id)
            .bind(zone.name())
            .bind(complete_from)
            .execute(&mut *conn)
            .await
            .map(|r| r.rows_affected())
    })?;
    Ok(())
}

/// The first instant after `now` at which a local day starts in `zone`.
pub(crate) fn next_midnight(zone: Tz, now: i64) -> i64 {
    let today = day_start(zone, now);
    // A local day is 23 to 25 hours long; 26 hours on is always the next day.
    day_start(zone, today + 26 * 3_600_000)
}

impl Services {
    /// Distinct visitors per day bucket of `window` from the day counts, and the
    /// window's remainder they cannot answer (its last, still running, day), or
    /// `None` when the counts cannot answer the window.
    pub(crate) async fn visitor_day_counts(
        &self,
        tenant_id: &str,
        window: &Window,
    ) -> CoreResult<Option<(Vec<(i64, i64)>, Option<Window>)>> {
        if window.unit != BucketUnit::Day || day_start(window.tz, window.start) != window.start {
            return Ok(None);
        }
        let complete_from: Option<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select complete_from from visitor_day_zones where tenant_id = $1 and zone = $2"
        )
        .bind(tenant_id)
        .bind(window.tz.name())
        .fetch_optional(pool)
        .await)?;
        if complete_from.is_none_or(|from| from > window.start) {
            return Ok(None);
        }
        // The last day may end after the window (today, or a CUSTOM end inside a
        // day): its visitors come from the hourly rows, cut at the window's end.
        let last_day = day_start(window.tz, window.end - 1);
        let rows: Vec<(i64, i64)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select hour, samples from report_rollups where tenant_id = $1 and kind = $2 and group_kind = 'ZONE' \
             and group_key = $3 and hour >= $4 and hour < $5"
        )
        .bind(tenant_id)
        .bind(VISITOR_DAY)
        .bind(window.tz.name())
        .bind(window.start)
        .bind(last_day)
        .fetch_all(pool)
        .await)?;
        let counts = rows.into_iter().map(|(day, n)| (window.bucket_of(day), n)).collect();
        Ok(Some((counts, window.clip(last_day, window.end))))
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
    }
}
