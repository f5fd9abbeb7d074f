//! Bounds on what a tenant's callers can make the server keep or do.
//!
//! The visitor script's endpoints are public: anyone holding a widget key (it
//! is in every page of the customer's site) can call them. What such a caller
//! makes the server store or send is bounded per tenant, so that one site,
//! busy or hostile, cannot fill the disk, flood the operator's mail server or
//! spend what its neighbours need:
//! - [`TenantLimits`] holds a tenant's bounds. Each has a default that fits a
//!   real site; a platform admin sets a tenant's own
//!   ([`Services::set_tenant_limits`]). A tenant's admins cannot raise them.
//! - What a tenant used per window (a UTC day, a minute) is counted in
//!   `tenant_usage`, inside the transaction of the write that uses it
//!   ([`spend`]). Every instance on one database shares the count, and a
//!   refused write leaves nothing behind.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::Tx,
    error::{CoreError, CoreResult},
    ids::TenantId,
    open_streams::StreamSlot,
    validate::Checks,
    with_db, with_tx, Services,
};

const MIB: i64 = 1024 * 1024;
const GIB: i64 = 1024 * MIB;
/// Days of `tenant_usage` kept (the bounds read only the current window's).
const USAGE_DAYS_KEPT: i64 = 7;
const DAY_MS: i64 = 86_400_000;
const MINUTE_MS: i64 = 60_000;

/// What a tenant's callers use, counted per window in `tenant_usage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Meter {
    /// Bytes of recorded events (as JSON, before compression), per UTC day.
    RecordingBytes,
    /// Mails written to the outbox, per UTC day.
    Mails,
    /// Visitors started by the visitor script, per minute.
    Visitors,
}

impl Meter {
    fn name(self) -> &'static str {
        match self {
            Meter::RecordingBytes => "recording_bytes",
            Meter::Mails => "mails",
            Meter::Visitors => "visitors",
        }
    }

    fn window_ms(self) -> i64 {
        match self {
            Meter::RecordingBytes | Meter::Mails => DAY_MS,
            Meter::Visitors => MINUTE_MS,
        }
    }

    /// The answer once the window's allowance is spent.
    fn spent(self, limit: i64, now_ms: i64) -> CoreError {
        let window = self.window_ms();
        let next = (now_ms.div_euclid(window) + 1) * window;
        let retry_after_secs = u64::try_from((next - now_ms + 999) / 1000).unwrap_or(1).max(1);
        let (code, message) = match self {
            Meter::RecordingBytes => (
                "recording_allowance_spent",
                format!("this workspace's recordings may keep {limit} bytes of events per day (UTC)"),
            ),
            Meter::Mails => (
                "mail_allowance_spent",
                format!("this workspace may send {limit} mails per day (UTC)"),
            ),
            Meter::Visitors => (
                "visitor_allowance_spent",
                format!("this workspace's pages may start {limit} visitors per minute"),
            ),
        };
        CoreError::AllowanceSpent {
            code,
            message,
            retry_after_secs,
        }
    }
}

/// The bounds: each one's JSON name (the field an error names), its column,
/// its default and its range.
struct Bound {
    field: &'static str,
    column: &'static str,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
}

/// How many bounds there are.
const N: usize = 8;

const BOUNDS: [Bound; N] = [
    Bound {
        field: "recordingSessionBytes",
        column: "recording_session_bytes",
        default: 64 * MIB,
        range: MIB..=4 * GIB,
    },
    Bound {
        field: "recordingDayBytes",
        column: "recording_day_bytes",
        default: 8 * GIB,
        range: MIB..=1024 * GIB,
    },
    Bound {
        field: "fileBytes",
        column: "file_bytes",
        default: 10 * GIB,
        range: 0..=1024 * GIB,
    },
    Bound {
        field: "mailsPerDay",
        column: "mails_per_day",
        default: 2_000,
        range: 0..=1_000_000,
    },
    Bound {
        field: "visitorsPerMinute",
        column: "visitors_per_minute",
        default: 1_200,
        range: 1..=1_000_000,
    },
    Bound {
        field: "openStreams",
        column: "open_streams",
        default: 2_000,
        range: 1..=1_000_000,
    },
    Bound {
        field: "cobrowseSessions",
        column: "cobrowse_sessions",
        default: 2,
        range: 0..=1_000,
    },
    Bound {
        field: "cobrowseParticipants",
        column: "cobrowse_participants",
        default: 8,
        range: 2..=100,
    },
];

/// A tenant's bounds on what its visitors' pages, and its own keys and
/// agents, can make the server keep or do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantLimits {
    /// Most bytes of events one recorded session keeps, counted as the
    /// script's JSON before compression (default 64 MiB). A batch that would
    /// pass it is refused with 413 `recording_session_full`, and the script
    /// stops recording that session.
    #[schema(minimum = 1048576, maximum = 4294967296_i64, example = 67108864)]
    pub recording_session_bytes: i64,
    /// Most bytes of events the tenant's recorded sessions keep per UTC day,
    /// counted the same way (default 8 GiB). Past it, batches are refused with
    /// 429 `recording_allowance_spent` and `Retry-After` until midnight UTC.
    #[schema(minimum = 1048576, maximum = 1099511627776_i64, example = 8589934592_i64)]
    pub recording_day_bytes: i64,
    /// Most bytes of chat files the tenant keeps, visitors' and agents' (default
    /// 10 GiB). A file that would pass it is refused with 413
    /// `file_storage_full`; deleting customers frees their files' bytes.
    #[schema(minimum = 0, maximum = 1099511627776_i64, example = 10737418240_i64)]
    pub file_bytes: i64,
    /// Most mails the tenant writes to the outbox per UTC day: appointment
    /// invitations and alert mails (default 2,000). Past it, invitations are
    /// refused with 429 `mail_allowance_spent` and alerts go out without mail.
    #[schema(minimum = 0, maximum = 1000000, example = 2000)]
    pub mails_per_day: i64,
    /// Most visitors the tenant's pages start per minute (default 1,200). Past
    /// it, `POST /widget/visitor` is refused with 429 `visitor_allowance_spent`
    /// and `Retry-After` until the next minute.
    #[schema(minimum = 1, maximum = 1000000, example = 1200)]
    pub visitors_per_minute: i64,
    /// Most event streams the tenant's public pages hold open at once on each
    /// instance: visitors' chat streams (`GET /widget/stream`), recording
    /// control streams and live views (default 2,000). Past it, a new stream is
    /// refused with 429 `stream_allowance_spent`; the visitor script falls back
    /// to polling. Agents' own streams do not count.
    #[schema(minimum = 1, maximum = 1000000, example = 2000)]
    pub open_streams: i64,
    /// Most co-browsing sessions (each a browser on the server) the tenant runs
    /// at once, on all instances together (default 2). A link of a further
    /// session says the workspace's sessions are all in use (`tenant_busy`).
    #[schema(minimum = 0, maximum = 1000, example = 2)]
    pub cobrowse_sessions: i64,
    /// Most people in one co-browsing session, the host included (default 8).
    /// Further guests are refused (`session_full`); the host always gets in.
    #[schema(minimum = 2, maximum = 100, example = 8)]
    pub cobrowse_participants: i64,
}

impl Default for TenantLimits {
    fn default() -> Self {
        effective([None; N])
    }
}

/// A change of a tenant's [`TenantLimits`]: omitted fields keep their value,
/// `null` returns to the default.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantLimitsIn {
    /// Bytes of events per recorded session, 1 MiB–4 GiB.
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 1048576, maximum = 4294967296_i64)]
    pub recording_session_bytes: Option<Option<i64>>,
    /// Bytes of recorded events per UTC day, 1 MiB–1 TiB.
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 1048576, maximum = 1099511627776_i64)]
    pub recording_day_bytes: Option<Option<i64>>,
    /// Bytes of chat files kept, 0–1 TiB (0: no files).
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1099511627776_i64)]
    pub file_bytes: Option<Option<i64>>,
    /// Mails per UTC day, 0–1,000,000 (0: no mail).
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1000000)]
    pub mails_per_day: Option<Option<i64>>,
    /// Visitors started per minute, 1–1,000,000.
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000000)]
    pub visitors_per_minute: Option<Option<i64>>,
    /// Open public event streams per instance, 1–1,000,000.
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 1, maximum = 1000000)]
    pub open_streams: Option<Option<i64>>,
    /// Co-browsing sessions at once, 0–1,000 (0: no co-browsing).
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 0, maximum = 1000)]
    pub cobrowse_sessions: Option<Option<i64>>,
    /// People per co-browsing session, host included, 2–100.
    #[serde(
        default,
        deserialize_with = "crate::tenants::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<i64>, minimum = 2, maximum = 100)]
    pub cobrowse_participants: Option<Option<i64>>,
}

impl TenantLimitsIn {
    /// The changes, in the order of [`BOUNDS`].
    fn changes(&self) -> [Option<Option<i64>>; N] {
        [
            self.recording_session_bytes,
            self.recording_day_bytes,
            self.file_bytes,
            self.mails_per_day,
            self.visitors_per_minute,
            self.open_streams,
            self.cobrowse_sessions,
            self.cobrowse_participants,
        ]
    }
}

/// A tenant's own bounds as stored, in the order of [`BOUNDS`]: `None` is the default.
type LimitsRow = [Option<i64>; N];

fn effective(row: LimitsRow) -> TenantLimits {
    let [session, day, files, mails, visitors, streams, cobrowse_sessions, cobrowse_participants] =
        std::array::from_fn(|i| row[i].unwrap_or(BOUNDS[i].default));
    TenantLimits {
        recording_session_bytes: session,
        recording_day_bytes: day,
        file_bytes: files,
        mails_per_day: mails,
        visitors_per_minute: visitors,
        open_streams: streams,
        cobrowse_sessions,
        cobrowse_participants,
    }
}

/// The columns of [`BOUNDS`], comma-separated.
fn limit_columns() -> String {
    BOUNDS.iter().map(|b| b.column).collect::<Vec<_>>().join(", ")
}

/// Reads a tenant's own bounds within `tx` (or `None` for each not set).
async fn stored_in(tx: &mut Tx, tenant_id: &TenantId) -> CoreResult<LimitsRow> {
    let row = with_tx!(tx, |conn| sqlx::query(&select_limits())
        .bind(tenant_id)
        .fetch_optional(conn)
        .await
        .map(|row| row.map(|r| as_row(&r))))?;
    Ok(row.unwrap_or_default())
}

/// The query of a tenant's own bounds (`$1`: the tenant).
fn select_limits() -> String {
    format!("select {} from tenant_limits where tenant_id = $1", limit_columns())
}

/// A stored row of `tenant_limits` as a [`LimitsRow`].
fn as_row<R: sqlx::Row>(row: &R) -> LimitsRow
where
    usize: sqlx::ColumnIndex<R>,
    for<'r> Option<i64>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
{
    std::array::from_fn(|i| row.get(i))
}

/// Counts `amount` on the tenant's `meter` in the window of `now_ms`, in the
/// write's transaction; refused ([`Meter::spent`], a 429) when that would pass
/// `limit`. The check and the count are one statement, so concurrent writes
/// cannot both slip under the bound.
pub(crate) async fn spend(
    tx: &mut Tx,
    tenant_id: &TenantId,
    meter: Meter,
    amount: i64,
    limit: i64,
    now_ms: i64,
) -> CoreResult<()> {
    let counted = amount <= limit
        && with_tx!(tx, |conn| sqlx::query(
            "insert into tenant_usage (tenant_id, meter, window_start, amount) values ($1, $2, $3, $4) \
             on conflict (tenant_id, meter, window_start) do update set amount = tenant_usage.amount + excluded.amount \
             where tenant_usage.amount + excluded.amount <= $5"
        )
        .bind(tenant_id)
        .bind(meter.name())
        .bind(now_ms - now_ms.rem_euclid(meter.window_ms()))
        .bind(amount)
        .bind(limit)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?
            > 0;
    if counted {
        Ok(())
    } else {
        Err(meter.spent(limit, now_ms))
    }
}

/// Counts mails against the tenant's day, reading its bound within `tx`.
pub(crate) async fn spend_mails(tx: &mut Tx, tenant_id: &TenantId, mails: usize, now_ms: i64) -> CoreResult<()> {
    let limit = effective(stored_in(tx, tenant_id).await?).mails_per_day;
    spend(tx, tenant_id, Meter::Mails, mails as i64, limit, now_ms).await
}

/// Counts one visitor started against the tenant's minute, reading its bound
/// within `tx`: a page's `POST /widget/visitor`, or a continue link followed.
pub(crate) async fn spend_visitor(tx: &mut Tx, tenant_id: &TenantId, now_ms: i64) -> CoreResult<()> {
    let limit = effective(stored_in(tx, tenant_id).await?).visitors_per_minute;
    spend(tx, tenant_id, Meter::Visitors, 1, limit, now_ms).await
}

impl Services {
    /// A place for one more public event stream of the tenant on this instance
    /// ([`crate::open_streams`]); refused with 429 `stream_allowance_spent`
    /// while it holds its `openStreams`. Keep the slot inside the stream.
    pub async fn open_public_stream(&self, tenant_id: &TenantId) -> CoreResult<StreamSlot> {
        let limit = self.tenant_limits(tenant_id).await?.open_streams;
        self.open_streams().take(tenant_id, limit)
    }

    /// A tenant's bounds: its own where the platform set them, else the defaults.
    pub async fn tenant_limits(&self, tenant_id: &TenantId) -> CoreResult<TenantLimits> {
        let row = with_db!(self.db(), |pool| sqlx::query(&select_limits())
            .bind(tenant_id)
            .fetch_optional(pool)
            .await
            .map(|row| row.map(|r| as_row(&r))))?;
        Ok(effective(row.unwrap_or_default()))
    }

    /// Sets a tenant's own bounds (a platform admin's decision; audited as
    /// `tenant.limits`). 404 for an unknown tenant.
    pub async fn set_tenant_limits(
        &self,
        tenant_id: &TenantId,
        input: TenantLimitsIn,
        actor: &Actor,
    ) -> CoreResult<TenantLimits> {
        self.get_tenant(tenant_id).await?;
        let mut tx = self.db().begin().await?;
        let stored = stored_in(&mut tx, tenant_id).await?;
        let mut checks = Checks::new();
        let mut row = stored;
        for (i, change) in input.changes().into_iter().enumerate() {
            if let Some(value) = change {
                row[i] = value;
            }
            if let Some(n) = row[i] {
                checks.in_range(BOUNDS[i].field, n, BOUNDS[i].range.clone());
            }
        }
        checks.finish()?;
        let sql = format!(
            "insert into tenant_limits (tenant_id, {}) values ($1, {}) on conflict (tenant_id) do update set {}",
            limit_columns(),
            crate::db::placeholders(2, N),
            BOUNDS
                .iter()
                .map(|b| format!("{0} = excluded.{0}", b.column))
                .collect::<Vec<_>>()
                .join(", ")
        );
        with_tx!(&mut tx, |conn| {
            let mut query = sqlx::query(&sql).bind(tenant_id);
            for value in row {
                query = query.bind(value);
            }
            query.execute(conn).await.map(|r| r.rows_affected())
        })?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "tenant.limits",
            "tenant",
            Some(tenant_id),
        )
        .await?;
        tx.commit().await?;
        Ok(effective(row))
    }

    /// Refuses (429 `mail_allowance_spent`) when `mails` more would pass the
    /// tenant's mails of today. Checked before a write that mails afterwards
    /// (an appointment with invitations), so a refusal leaves nothing created.
    pub(crate) async fn ensure_mail_allowance(&self, tenant_id: &TenantId, mails: usize) -> CoreResult<()> {
        let limit = self.tenant_limits(tenant_id).await?.mails_per_day;
        let now = crate::time::now_ms();
        let used: Option<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select amount from tenant_usage where tenant_id = $1 and meter = $2 and window_start = $3"
        )
        .bind(tenant_id)
        .bind(Meter::Mails.name())
        .bind(now - now.rem_euclid(Meter::Mails.window_ms()))
        .fetch_optional(pool)
        .await)?;
        if used.unwrap_or(0) + mails as i64 > limit {
            return Err(Meter::Mails.spent(limit, now));
        }
        Ok(())
    }

    /// Forgets usage counts older than a week (the bounds read today's only).
    pub(crate) async fn prune_tenant_usage(&self, now_ms: i64) -> CoreResult<u64> {
        Ok(with_db!(self.writer(), |pool| sqlx::query(
            "delete from tenant_usage where window_start < $1"
        )
        .bind(now_ms - USAGE_DAYS_KEPT * DAY_MS)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?)
    }
}

#[cfg(test)]
mod tests;
