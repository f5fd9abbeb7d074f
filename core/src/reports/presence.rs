//! Agent presence, recorded as intervals: `LOGGED_IN` while the agent is signed in
//! with the dashboard open, and `ONLINE` or `AWAY` as set in the top bar.
//!
//! The dashboard sends a heartbeat; an interval whose agent stopped sending is
//! closed at its last heartbeat by [`Services::close_stale_presence`], which the
//! server runs periodically. Signing out closes every interval at once. A closed
//! interval is final: it is cut at UTC hour edges and local midnights into the
//! rollups then.

pub use super::api::PresenceStatus;
use super::{
    days::rollup_zone,
    facts::{add_rollup, rollup_pieces},
};
use crate::{
    db::Tx,
    error::CoreResult,
    ids::{TenantId, UserId},
    time::now_ms,
    with_db, with_tx, Services,
};

const LOGGED_IN: &str = "LOGGED_IN";
const ONLINE: &str = "ONLINE";
const AWAY: &str = "AWAY";

/// Serialises presence changes of one user: a write to their row first.
async fn lock_user(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<bool> {
    let n = with_tx!(tx, |conn| sqlx::query(
        "update users set id = id where tenant_id = $1 and id = $2"
    )
    .bind(tenant_id)
    .bind(user_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(n == 1)
}

async fn open_states(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<Vec<(String, String)>> {
    Ok(with_tx!(tx, |conn| sqlx::query_as(
        "select id, state from presence_intervals where tenant_id = $1 and user_id = $2 and ended_at is null"
    )
    .bind(tenant_id)
    .bind(user_id)
    .fetch_all(conn)
    .await)?)
}

async fn open(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId, state: &str, now: i64) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "insert into presence_intervals (id, tenant_id, user_id, state, started_at, last_seen_at) \
         values ($1, $2, $3, $4, $5, $5)"
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(tenant_id)
    .bind(user_id)
    .bind(state)
    .bind(now)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Ends interval `id` at `end` (never before its start) and rolls it up. With
/// `seen_before`, only if no heartbeat came since (a sweep racing a heartbeat).
async fn close(tx: &mut Tx, tenant_id: &TenantId, id: &str, end: i64, seen_before: Option<i64>) -> CoreResult<()> {
    let row: Option<(UserId, String, i64)> = with_tx!(tx, |conn| sqlx::query_as(
        "update presence_intervals set ended_at = case when started_at > $3 then started_at else $3 end \
         where tenant_id = $1 and id = $2 and ended_at is null and ($4 is null or last_seen_at < $4) \
         returning user_id, state, started_at"
    )
    .bind(tenant_id)
    .bind(id)
    .bind(end)
    .bind(seen_before)
    .fetch_optional(conn)
    .await)?;
    let Some((user_id, state, started)) = row else {
        return Ok(());
    };
    roll_up(tx, tenant_id, &user_id, &state, started, end.max(started)).await
}

/// Writes a closed interval with its rollups (imports, demo data, tests).
pub(crate) async fn insert_closed(
    tx: &mut Tx,
    tenant_id: &TenantId,
    user_id: &UserId,
    state: &str,
    start: i64,
    end: i64,
) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "insert into presence_intervals (id, tenant_id, user_id, state, started_at, ended_at, last_seen_at) \
         values ($1, $2, $3, $4, $5, $6, $6)"
    )
    .bind(uuid::Uuid::now_v7().to_string())
    .bind(tenant_id)
    .bind(user_id)
    .bind(state)
    .bind(start)
    .bind(end)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    roll_up(tx, tenant_id, user_id, state, start, end).await
}

/// Adds a closed interval to the rollups, cut at hours and local midnights.
async fn roll_up(
    tx: &mut Tx,
    tenant_id: &TenantId,
    user_id: &UserId,
    state: &str,
    start: i64,
    end: i64,
) -> CoreResult<()> {
    let kind = format!("PRESENCE_{state}");
    let zone = rollup_zone(tx, tenant_id).await?;
    for (at, ms) in rollup_pieces(zone, start, end) {
        add_rollup(tx, tenant_id, zone, &kind, at, ms, 1, &[("AGENT", user_id)]);
    }
    Ok(())
}

/// Sets the agent's status in `tx`: the current `ONLINE`/`AWAY` interval
/// closes and the new one opens (none for `OFFLINE`); the agent counts as
/// signed in. The status before, or `None` when nothing changed.
pub(crate) async fn set_in(
    tx: &mut Tx,
    tenant_id: &TenantId,
    user_id: &UserId,
    status: PresenceStatus,
    now: i64,
) -> CoreResult<Option<PresenceStatus>> {
    if !lock_user(tx, tenant_id, user_id).await? {
        return Err(crate::error::CoreError::NotFound("user"));
    }
    let states = open_states(tx, tenant_id, user_id).await?;
    if status_of(&states) == status && states.iter().any(|(_, s)| s == LOGGED_IN) {
        return Ok(None);
    }
    for (id, state) in &states {
        if state != LOGGED_IN {
            close(tx, tenant_id, id, now, None).await?;
        }
    }
    if !states.iter().any(|(_, s)| s == LOGGED_IN) {
        open(tx, tenant_id, user_id, LOGGED_IN, now).await?;
    }
    match status {
        PresenceStatus::Online => open(tx, tenant_id, user_id, ONLINE, now).await?,
        PresenceStatus::Away => open(tx, tenant_id, user_id, AWAY, now).await?,
        PresenceStatus::Offline => {}
    }
    Ok(Some(status_of(&states)))
}

/// Closes every open interval whose last heartbeat is before `cutoff`, at that
/// heartbeat (500 at a time). Returns how many closed, and the agents who
/// were online or away among them, once each: they are gone.
pub(crate) async fn close_stale(db: &crate::db::Db, cutoff: i64) -> CoreResult<(usize, Vec<(TenantId, UserId)>)> {
    let stale: Vec<(TenantId, String, i64, UserId, String)> = with_db!(db, |pool| sqlx::query_as(
        "select tenant_id, id, last_seen_at, user_id, state from presence_intervals \
         where ended_at is null and last_seen_at < $1 limit 500"
    )
    .bind(cutoff)
    .fetch_all(pool)
    .await)?;
    if stale.is_empty() {
        return Ok((0, Vec::new()));
    }
    let mut tx = db.begin().await?;
    for (tenant_id, id, last_seen, _, _) in &stale {
        close(&mut tx, tenant_id, id, *last_seen, Some(cutoff)).await?;
    }
    tx.commit().await?;
    let mut gone: Vec<(TenantId, UserId)> = stale
        .iter()
        .filter(|(_, _, _, _, state)| state != LOGGED_IN)
        .map(|(tenant_id, _, _, user_id, _)| (tenant_id.clone(), user_id.clone()))
        .collect();
    gone.sort_unstable();
    gone.dedup();
    Ok((stale.len(), gone))
}

/// Closes every open interval of the agent now, in `tx`. Whether they were
/// online or away until then.
pub(crate) async fn close_all(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId, now: i64) -> CoreResult<bool> {
    if !lock_user(tx, tenant_id, user_id).await? {
        return Ok(false);
    }
    let states = open_states(tx, tenant_id, user_id).await?;
    let was_present = status_of(&states) != PresenceStatus::Offline;
    for (id, _) in states {
        close(tx, tenant_id, &id, now, None).await?;
    }
    Ok(was_present)
}

impl Services {
    /// Records a finished presence interval of a tenant user (`LOGGED_IN`,
    /// `ONLINE` or `AWAY`), e.g. imported from another system.
    pub async fn record_presence_interval(
        &self,
        tenant_id: &TenantId,
        user_id: &UserId,
        state: &str,
        start: i64,
        end: i64,
    ) -> CoreResult<()> {
        let mut checks = crate::validate::Checks::new();
        if ![LOGGED_IN, ONLINE, AWAY].contains(&state) {
            checks.push("state", "invalid_enum", "LOGGED_IN, ONLINE or AWAY");
        }
        if end < start {
            checks.push("end", "before_start", "end must not be before start");
        }
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        if !lock_user(&mut tx, tenant_id, user_id).await? {
            return Err(crate::error::CoreError::NotFound("user"));
        }
        insert_closed(&mut tx, tenant_id, user_id, state, start, end).await?;
        tx.commit().await
    }

    /// The agent signed in to the dashboard: a `LOGGED_IN` interval opens.
    pub(crate) async fn presence_signed_in(&self, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<()> {
        self.presence_heartbeat(tenant_id, user_id).await.map(|_| ())
    }

    /// The dashboard is open: keeps the open intervals alive (opening `LOGGED_IN`
    /// again after a timeout) and returns the agent's status.
    pub async fn presence_heartbeat(&self, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<PresenceStatus> {
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        if !lock_user(&mut tx, tenant_id, user_id).await? {
            return Err(crate::error::CoreError::NotFound("user"));
        }
        let states = open_states(&mut tx, tenant_id, user_id).await?;
        if !states.iter().any(|(_, s)| s == LOGGED_IN) {
            open(&mut tx, tenant_id, user_id, LOGGED_IN, now).await?;
        }
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "update presence_intervals set last_seen_at = $3 where tenant_id = $1 and user_id = $2 and ended_at is null"
        )
        .bind(tenant_id)
        .bind(user_id)
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        tx.commit().await?;
        Ok(status_of(&states))
    }

    /// The agent's current status.
    pub async fn presence_status(&self, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<PresenceStatus> {
        let states: Vec<(String, String)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select id, state from presence_intervals where tenant_id = $1 and user_id = $2 and ended_at is null"
        )
        .bind(tenant_id)
        .bind(user_id)
        .fetch_all(pool)
        .await)?;
        Ok(status_of(&states))
    }
}

fn status_of(states: &[(String, String)]) -> PresenceStatus {
    if states.iter().any(|(_, s)| s == ONLINE) {
        PresenceStatus::Online
    } else if states.iter().any(|(_, s)| s == AWAY) {
        PresenceStatus::Away
    } else {
        PresenceStatus::Offline
    }
}
