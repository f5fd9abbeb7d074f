//! Rate limits shared by every instance on one database: counters per fixed
//! window, leased out to each instance a few at a time, and budgets of
//! failures.
//!
//! A limit allows `limit` units (requests, events, failures) per key per
//! window. The count of each (key, window) lives in `rate_counters`; an
//! instance does not write it per request, it takes a *lease*: a few units at
//! once, added to the shared count in one upsert, then spent from memory.
//! - No instance ever spends more than it leased, and a lease never takes more
//!   than the window has left, so all instances together never exceed the
//!   limit.
//! - Units leased but not spent when the window ends are lost. A lease is at
//!   most a fiftieth of the limit, and an eighth of what was left when it was
//!   taken, so near the limit leases shrink to one unit, and what all
//!   instances can hold back unspent stays within a few percent of the limit.
//! - A request that finds its lease empty costs one round trip; the others
//!   none. Reads (login checks) cost one each.
//!
//! A [`Budget`] counts what is rare and must be slowed (failed sign-ins, wrong
//! call passwords) as the in-memory limiters do, with GCRA: each occurrence
//! moves the key's theoretical arrival time a period on, and the key is held
//! while that time is more than `burst` periods ahead. Each occurrence is one
//! write; each check one read.
//!
//! Keys are stored as SHA-256 digests: the table never holds an address, an
//! e-mail or a token. A database error lets the request through (and is
//! logged): a limiter is no reason to refuse service while the database
//! recovers, and every request that writes fails then anyway.
//!
//! The server uses this on PostgreSQL, where several instances share one
//! database; with SQLite (one instance) its limiters stay in memory.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use crate::{crypto::token_digest, db::Db, error::CoreResult, time::now_ms, with_db};

/// One limit: `limit` units per key per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowLimit {
    /// Names the limit in the stored key (`rest.token`, `login.ip`, …).
    pub name: &'static str,
    /// Units per window; 0 turns the limit off.
    pub limit: u32,
    /// The window's length.
    pub window: Duration,
}

impl WindowLimit {
    fn window_ms(&self) -> i64 {
        i64::try_from(self.window.as_millis()).unwrap_or(i64::MAX).max(1)
    }

    /// The start of the window `at_ms` falls in.
    fn window_at(&self, at_ms: i64) -> i64 {
        at_ms.div_euclid(self.window_ms()) * self.window_ms()
    }

    /// Seconds from `now_ms` to the end of its window (at least 1).
    fn retry_after(&self, now_ms: i64) -> u64 {
        let end = self.window_at(now_ms) + self.window_ms();
        u64::try_from((end - now_ms + 999) / 1000).unwrap_or(1).max(1)
    }

    /// The largest lease: a fiftieth of the limit, and at least one unit.
    fn max_lease(&self) -> u64 {
        u64::from(self.limit / 50).max(1)
    }
}

/// A budget of `burst` occurrences per key, refilled one per `period`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Names the budget in the stored key (`login.ip`, …).
    pub name: &'static str,
    /// Occurrences allowed at once.
    pub burst: u32,
    /// How long one occurrence takes to be forgiven.
    pub period: Duration,
}

impl Budget {
    fn period_ms(&self) -> i64 {
        i64::try_from(self.period.as_millis()).unwrap_or(i64::MAX)
    }

    /// How far ahead of now the theoretical arrival time may be.
    fn tolerance_ms(&self) -> i64 {
        self.period_ms().saturating_mul(i64::from(self.burst))
    }

    fn as_limit(&self) -> WindowLimit {
        WindowLimit {
            name: self.name,
            limit: self.burst,
            window: self.period,
        }
    }
}

/// The window that holds budgets' arrival times (budgets have no windows).
const BUDGET_ROW: i64 = 0;

/// What this instance holds of one key's current window.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// The window it belongs to.
    window: i64,
    /// When that window ends (unix ms): past it, the lease is forgotten.
    ends: i64,
    /// Units leased and not yet spent.
    left: u64,
    /// The shared count after this instance's last lease.
    seen: u64,
}

/// The shared counters, with this instance's leases.
pub struct RateWindows {
    db: Db,
    leases: Mutex<HashMap<String, Lease>>,
}

impl RateWindows {
    /// Counters on `db`, which must take writes (on SQLite,
    /// `Services::writer`): every lease is one.
    pub fn new(db: Db) -> RateWindows {
        RateWindows {
            db,
            leases: Mutex::new(HashMap::new()),
        }
    }

    /// Spends `n` units of `limit` for `key`; `Err(seconds)` to wait when the
    /// window has too few left. `n` larger than the whole limit never fits.
    pub async fn take(&self, limit: &WindowLimit, key: &str, n: u32) -> Result<(), u64> {
        if limit.limit == 0 || n == 0 {
            return Ok(());
        }
        let now = now_ms();
        if n > limit.limit {
            return Err(limit.retry_after(now));
        }
        let stored_key = stored_key(limit, key);
        let window = limit.window_at(now);
        let n = u64::from(n);
        // From the lease, when it holds enough.
        let seen = {
            let mut leases = self.leases.lock().unwrap_or_else(|e| e.into_inner());
            let lease = current(&mut leases, &stored_key, window, limit);
            if lease.left >= n {
                lease.left -= n;
                return Ok(());
            }
            if lease.seen >= u64::from(limit.limit) {
                // The window is spent across instances; only its end helps.
                return Err(limit.retry_after(now));
            }
            lease.seen
        };
        // A new lease: what this request needs, and some to spare.
        let remaining = u64::from(limit.limit).saturating_sub(seen);
        let spare = limit.max_lease().min(remaining / 8);
        let want = n + spare;
        let used = match self.add(limit, &stored_key, window, want).await {
            Ok(used) => used,
            Err(err) => {
                tracing::warn!(limit = limit.name, error = %err, "a shared rate limit cannot be read; the request passes");
                return Ok(());
            }
        };
        let before = used.saturating_sub(want);
        let granted = u64::from(limit.limit).saturating_sub(before).min(want);
        let mut leases = self.leases.lock().unwrap_or_else(|e| e.into_inner());
        let lease = current(&mut leases, &stored_key, window, limit);
        lease.left += granted;
        lease.seen = lease.seen.max(used);
        if lease.left >= n {
            lease.left -= n;
            Ok(())
        } else {
            Err(limit.retry_after(now_ms()))
        }
    }

    /// Counts `n` units of `limit` for `key` without a lease (failures, which
    /// are rare), and returns the window's count after it.
    pub async fn count(&self, limit: &WindowLimit, key: &str, n: u32) -> CoreResult<u64> {
        let now = now_ms();
        self.add(limit, &stored_key(limit, key), limit.window_at(now), u64::from(n))
            .await
    }

    /// The count of `key` in the current window, and in the one before.
    pub async fn read(&self, limit: &WindowLimit, key: &str) -> CoreResult<(u64, u64)> {
        let window = limit.window_at(now_ms());
        let key = stored_key(limit, key);
        let rows: Vec<(i64, i64)> = with_db!(&self.db, |pool| sqlx::query_as(
            "select window_start, used from rate_counters where key = $1 and window_start in ($2, $3)"
        )
        .bind(&key)
        .bind(window)
        .bind(window - limit.window_ms())
        .fetch_all(pool)
        .await)?;
        let of = |w: i64| {
            rows.iter()
                .find(|(at, _)| *at == w)
                .map_or(0, |(_, used)| u64::try_from(*used).unwrap_or(0))
        };
        Ok((of(window), of(window - limit.window_ms())))
    }

    /// Records one occurrence against `budget` for `key`.
    pub async fn spend(&self, budget: &Budget, key: &str) -> CoreResult<()> {
        let now = now_ms();
        let key = stored_key(&budget.as_limit(), key);
        let later = match self.db.backend() {
            crate::db::Backend::Postgres => "greatest",
            crate::db::Backend::Sqlite => "max",
        };
        // A failure while the key is held already moves nothing: however many
        // fail at once, the key is held for one period at most.
        let next = format!(
            "case when {later}(rate_counters.used, $3) - $3 > $5 then rate_counters.used \
             else {later}(rate_counters.used, $3) + $4 end"
        );
        let sql = format!(
            "insert into rate_counters (key, window_start, used, expires_at) values ($1, $2, $3 + $4, $3 + $4) \
             on conflict (key, window_start) do update set used = {next}, expires_at = {next}"
        );
        with_db!(&self.db, |pool| sqlx::query(&sql)
            .bind(&key)
            .bind(BUDGET_ROW)
            .bind(now)
            .bind(budget.period_ms())
            .bind(budget.tolerance_ms())
            .execute(pool)
            .await
            .map(|_| ()))?;
        Ok(())
    }

    /// `Some(seconds)` to wait while `key` has spent more than `budget`
    /// allows; `None` while it has some left.
    pub async fn held(&self, budget: &Budget, key: &str) -> CoreResult<Option<u64>> {
        let now = now_ms();
        let key = stored_key(&budget.as_limit(), key);
        let arrival: Option<i64> = with_db!(&self.db, |pool| sqlx::query_scalar(
            "select used from rate_counters where key = $1 and window_start = $2"
        )
        .bind(&key)
        .bind(BUDGET_ROW)
        .fetch_optional(pool)
        .await)?;
        let over = arrival.unwrap_or(now) - now - budget.tolerance_ms();
        Ok((over > 0).then(|| u64::try_from((over + 999) / 1000).unwrap_or(1).max(1)))
    }

    /// Adds `n` to the shared count of (`key`, `window`) and returns it.
    async fn add(&self, limit: &WindowLimit, key: &str, window: i64, n: u64) -> CoreResult<u64> {
        // Kept through the next window, which `read` also looks at.
        let expires_at = window + 2 * limit.window_ms();
        let used: i64 = with_db!(&self.db, |pool| sqlx::query_scalar(
            "insert into rate_counters (key, window_start, used, expires_at) values ($1, $2, $3, $4) \
             on conflict (key, window_start) do update set used = rate_counters.used + excluded.used \
             returning used"
        )
        .bind(key)
        .bind(window)
        .bind(i64::try_from(n).unwrap_or(i64::MAX))
        .bind(expires_at)
        .fetch_one(pool)
        .await)?;
        Ok(u64::try_from(used).unwrap_or(0))
    }

    /// Forgets leases of past windows, and deletes counters past their
    /// windows. Run periodically by each instance.
    pub async fn prune(&self) -> CoreResult<u64> {
        let now = now_ms();
        self.leases
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|_, lease| lease.ends > now);
        Ok(with_db!(&self.db, |pool| sqlx::query(
            "delete from rate_counters where expires_at < $1"
        )
        .bind(now)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?)
    }
}

/// This instance's lease of `key` in `window` of `limit`: an earlier
/// window's is replaced by an empty one.
fn current<'a>(leases: &'a mut HashMap<String, Lease>, key: &str, window: i64, limit: &WindowLimit) -> &'a mut Lease {
    let empty = Lease {
        window,
        ends: window + limit.window_ms(),
        left: 0,
        seen: 0,
    };
    let lease = leases.entry(key.to_string()).or_insert(empty);
    if lease.window != window {
        *lease = empty;
    }
    lease
}

/// The stored key: a digest of the limit's name and the caller's key.
fn stored_key(limit: &WindowLimit, key: &str) -> String {
    token_digest(&format!("{}\u{0}{key}", limit.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_and_waits() {
        let limit = WindowLimit {
            name: "t",
            limit: 100,
            window: Duration::from_secs(60),
        };
        assert_eq!(limit.window_at(125_000), 120_000);
        assert_eq!(limit.retry_after(125_000), 55);
        assert_eq!(limit.retry_after(179_999), 1);
        assert_eq!(limit.max_lease(), 2);
        let small = WindowLimit { limit: 10, ..limit };
        assert_eq!(small.max_lease(), 1, "a lease is at least one unit");
    }

    #[test]
    fn keys_are_digests() {
        let limit = WindowLimit {
            name: "login.account",
            limit: 1,
            window: Duration::from_secs(1),
        };
        let key = stored_key(&limit, "kim@example.com");
        assert_eq!(key.len(), 64);
        assert!(!key.contains("kim"));
        assert_ne!(
            key,
            stored_key(
                &WindowLimit {
                    name: "login.ip",
                    ..limit
                },
                "kim@example.com"
            )
        );
    }
}
