//! What a report must know of its tenant before it can plan a read: the
//! tenant's time zone, and the zone and completeness of its day rollups.
//!
//! Reading that first would cost every report a round trip of its own, which
//! on a small period is a third of the report. So each [`Services`] keeps the
//! last state it read per tenant ([`ZoneStates`]), plans with it, and lets the
//! report's own statement check it: [`super::reads::Reads`] adds one branch
//! that reads the state again beside the report's rows. When the two differ
//! (another instance changed the zone, say), the report is planned again from
//! a fresh read. The cache is never trusted unchecked, so it can never make an
//! answer wrong, only a report slower once after a change.

use std::{
    collections::HashMap,
    future::Future,
    sync::{Arc, Mutex, PoisonError},
};

use chrono_tz::Tz;

use super::{
    api::DateFilter,
    catalogue::Source,
    window::{parse_zone, KeptDays, Window, ZoneCheck},
};
use crate::{error::CoreError, error::CoreResult, ids::TenantId, with_db, Services};

/// What a report's window is made from: its date filter, the sources of its
/// metrics (for `ALL`) and the field prefix its errors name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Period<'a> {
    pub filter: &'a DateFilter,
    pub sources: &'a [Source],
    pub field: &'a str,
}

/// The zone a date filter asks for, if any; a 422 at `{field}timeZone` when
/// it is not an IANA zone.
pub(crate) fn requested_zone(filter: &DateFilter, field: &str) -> CoreResult<Option<Tz>> {
    filter
        .time_zone
        .as_deref()
        .map(|name| parse_zone(&format!("{field}timeZone"), name))
        .transpose()
}

/// A tenant's zone and the state of its day rollups, as one statement reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ZoneState {
    /// The tenant's IANA zone.
    pub tenant_zone: Tz,
    /// The zone the day rows are kept in, and from when they are complete (and
    /// the script-error rows), if any are kept.
    pub kept: Option<(String, i64, i64)>,
}

impl ZoneState {
    /// The tenant row's columns as [`ZONE_STATE_SQL`] selects them; a zone name
    /// that no longer parses falls back to UTC, as the tenant's reports always have.
    fn from_row((zone, kept_zone, complete_from, errors_from): ZoneRow) -> ZoneState {
        ZoneState {
            tenant_zone: zone.parse().unwrap_or(chrono_tz::UTC),
            kept: match (kept_zone, complete_from, errors_from) {
                (Some(zone), Some(complete), Some(errors)) => Some((zone, complete, errors)),
                _ => None,
            },
        }
    }

    /// What is known of the day rows for a window cut in `tz`.
    pub fn kept_days(&self, tz: Tz) -> KeptDays {
        match &self.kept {
            Some((zone, complete_from, errors_from)) if zone == tz.name() => KeptDays::Kept {
                complete_from: *complete_from,
                errors_from: *errors_from,
            },
            _ => KeptDays::Absent,
        }
    }

    /// The state as [`CHECK_SQL`] writes it, to compare in one string.
    pub fn fingerprint(&self) -> String {
        let (zone, complete, errors) = match &self.kept {
            Some((zone, complete, errors)) => (zone.as_str(), *complete, *errors),
            None => ("", -1, -1),
        };
        format!("{} {zone} {complete} {errors}", self.tenant_zone.name())
    }
}

/// The tenant's zone, and the zone and completeness of its day rollups, if any.
type ZoneRow = (String, Option<String>, Option<i64>, Option<i64>);

const ZONE_STATE_SQL: &str = "select t.timezone, z.zone, z.complete_from, z.errors_from from tenants t \
     left join day_rollup_zones z on z.tenant_id = t.id where t.id = $1";

/// One branch of a report's statement that reads the state back as
/// [`ZoneState::fingerprint`] writes it, in the `k` column (tenant id at `$1`).
pub(crate) const CHECK_SQL: &str = "select cast(0 as bigint) as b, t.timezone || ' ' || coalesce(z.zone, '') \
     || ' ' || coalesce(z.complete_from, -1) || ' ' || coalesce(z.errors_from, -1) as k, \
     cast(0 as bigint) as t, cast(0 as bigint) as n from tenants t \
     left join day_rollup_zones z on z.tenant_id = t.id where t.id = $1";

/// The last [`ZoneState`] read per tenant, shared by the clones of a [`Services`].
#[derive(Debug, Clone, Default)]
pub(crate) struct ZoneStates(Arc<Mutex<HashMap<TenantId, ZoneState>>>);

impl ZoneStates {
    fn get(&self, tenant_id: &TenantId) -> Option<ZoneState> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(tenant_id)
            .cloned()
    }

    fn put(&self, tenant_id: &TenantId, state: ZoneState) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(tenant_id.clone(), state);
    }

    /// Drops what is known of a tenant (its zone changed here, or it is gone).
    pub fn forget(&self, tenant_id: &TenantId) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).remove(tenant_id);
    }
}

impl Services {
    /// Reads a tenant's zone state, and keeps it for later reports.
    pub(crate) async fn read_zone_state(&self, tenant_id: &TenantId) -> CoreResult<ZoneState> {
        let row: Option<ZoneRow> = with_db!(self.db(), |pool| sqlx::query_as(ZONE_STATE_SQL)
            .bind(tenant_id)
            .fetch_optional(pool)
            .await)?;
        let state = ZoneState::from_row(row.ok_or(CoreError::NotFound("tenant"))?);
        self.zone_states().put(tenant_id, state.clone());
        Ok(state)
    }

    /// Runs `report` in the window of a period (see [`Self::report_window`]),
    /// planned with the tenant's last known zone state, which the report's
    /// statements check as they read (see the module doc). When a check fails,
    /// the report runs again in a window from a fresh read, whose statements
    /// need no check. Every read of `report` must then go through
    /// [`super::reads::Reads`], where the check is made; a report that also
    /// reads otherwise passes `checked: false` and reads the state first.
    pub(crate) async fn in_window<T, Fut>(
        &self,
        tenant_id: &TenantId,
        period: Period<'_>,
        checked: bool,
        mut report: impl FnMut(Window) -> Fut,
    ) -> CoreResult<T>
    where
        Fut: Future<Output = CoreResult<T>>,
    {
        let requested = requested_zone(period.filter, period.field)?;
        if let Some(state) = self.zone_states().get(tenant_id).filter(|_| checked) {
            let check = Arc::new(ZoneCheck::new(tenant_id.clone(), state.fingerprint()));
            let window = self
                .plan_window(tenant_id, &state, Some(check.clone()), requested, period)
                .await?;
            let answer = report(window).await;
            if !check.is_stale() {
                return answer;
            }
            self.zone_states().forget(tenant_id);
        }
        let state = self.read_zone_state(tenant_id).await?;
        let window = self.plan_window(tenant_id, &state, None, requested, period).await?;
        report(window).await
    }
}
