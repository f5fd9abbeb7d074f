//! The limiters of instances that share one PostgreSQL: the same limits as
//! [`super::local`], counted per fixed window in `rapport_core::rate_windows`,
//! so that N instances together allow what one would.
//!
//! Requests are counted per window of a minute; failures (sign-ins, call
//! passwords) against the same burst-then-rate budgets as in memory.

use std::{net::IpAddr, sync::Arc, time::Duration};

use rapport_core::{
    ids::TenantId,
    rate_windows::{Budget, RateWindows, WindowLimit},
};

use super::local::*;

const MINUTE: Duration = Duration::from_secs(60);

const fn budget(name: &'static str, burst: u32, period: Duration) -> Budget {
    Budget { name, burst, period }
}

const LOGIN_PER_IP: Budget = budget("login.ip", LOGIN_PER_IP_BURST, LOGIN_PER_IP_PERIOD);
const LOGIN_PER_ACCOUNT: Budget = budget("login.account_ip", LOGIN_PER_ACCOUNT_BURST, LOGIN_PER_ACCOUNT_PERIOD);
const LOGIN_ACCOUNT_WIDE: Budget = budget("login.account", LOGIN_ACCOUNT_WIDE_BURST, LOGIN_ACCOUNT_WIDE_PERIOD);
/// Sign-ins per account and address; a count in this window or the one
/// before makes the address known to the account.
const KNOWN: WindowLimit = WindowLimit {
    name: "login.known",
    limit: u32::MAX,
    window: KNOWN_FOR,
};
const CALL_PER_LINK: Budget = budget("call.link", CALL_PASSWORD_PER_LINK_BURST, CALL_PASSWORD_PER_LINK_PERIOD);
const CALL_PER_IP: Budget = budget("call.ip", CALL_PASSWORD_PER_IP_BURST, CALL_PASSWORD_PER_IP_PERIOD);

/// The limiters, shared through the database.
pub struct SharedLimiters {
    windows: Arc<RateWindows>,
    per_token: WindowLimit,
    per_ip: WindowLimit,
    track_per_tenant: WindowLimit,
    track_per_address: WindowLimit,
}

impl SharedLimiters {
    /// The REST limits (requests per minute; 0 = off) and the tracking limit
    /// (events per minute per tenant; 0 = off), counted in `windows`.
    pub fn new(windows: Arc<RateWindows>, per_token: u32, per_ip: u32, track_events: u32) -> SharedLimiters {
        let per_minute = |name, limit| WindowLimit {
            name,
            limit,
            window: MINUTE,
        };
        SharedLimiters {
            windows,
            per_token: per_minute("rest.token", per_token),
            per_ip: per_minute("rest.ip", per_ip),
            track_per_tenant: per_minute("track.tenant", track_events),
            // A tenth of the tenant's minute, and never less than one full batch.
            track_per_address: per_minute(
                "track.address",
                if track_events > 0 {
                    (track_events / 10).max(100)
                } else {
                    0
                },
            ),
        }
    }

    /// See [`super::Limiters::check_rest`].
    pub async fn check_rest(&self, ip: IpAddr, token_digest: Option<&str>) -> Result<(), u64> {
        self.windows.take(&self.per_ip, &ip.to_string(), 1).await?;
        match token_digest {
            Some(digest) => self.windows.take(&self.per_token, digest, 1).await,
            None => Ok(()),
        }
    }

    /// See [`super::Limiters::check_track`].
    pub async fn check_track(&self, tenant_id: &TenantId, ip: IpAddr, events: usize) -> Result<(), u64> {
        let Some(n) = u32::try_from(events).ok().filter(|n| *n > 0) else {
            return if events == 0 { Ok(()) } else { Err(60) };
        };
        self.windows
            .take(&self.track_per_address, &format!("{tenant_id}\u{0}{ip}"), n)
            .await?;
        self.windows.take(&self.track_per_tenant, tenant_id.as_str(), n).await
    }

    /// See [`super::Limiters::check_login`].
    pub async fn check_login(&self, ip: IpAddr, account: &str) -> Result<(), u64> {
        let account = account_key(account);
        let pair = format!("{account}\u{0}{ip}");
        self.gate(&LOGIN_PER_IP, &ip.to_string()).await?;
        self.gate(&LOGIN_PER_ACCOUNT, &pair).await?;
        if self.is_known(&pair).await {
            return Ok(());
        }
        self.gate(&LOGIN_ACCOUNT_WIDE, &account).await
    }

    /// See [`super::Limiters::login_failed`].
    pub async fn login_failed(&self, ip: IpAddr, account: &str) {
        let account = account_key(account);
        let pair = format!("{account}\u{0}{ip}");
        self.failed(&LOGIN_PER_IP, &ip.to_string()).await;
        self.failed(&LOGIN_ACCOUNT_WIDE, &account).await;
        self.failed(&LOGIN_PER_ACCOUNT, &pair).await;
    }

    /// See [`super::Limiters::login_succeeded`].
    pub async fn login_succeeded(&self, ip: IpAddr, account: &str) {
        let pair = format!("{}\u{0}{ip}", account_key(account));
        if let Err(err) = self.windows.count(&KNOWN, &pair, 1).await {
            tracing::warn!(error = %err, "cannot note a sign-in's address");
        }
    }

    /// See [`super::Limiters::check_call_password`].
    pub async fn check_call_password(&self, link: &str, ip: IpAddr) -> Result<(), u64> {
        self.gate(&CALL_PER_IP, &ip.to_string()).await?;
        self.gate(&CALL_PER_LINK, link).await
    }

    /// See [`super::Limiters::call_password_failed`].
    pub async fn call_password_failed(&self, link: &str, ip: IpAddr) {
        self.failed(&CALL_PER_IP, &ip.to_string()).await;
        self.failed(&CALL_PER_LINK, link).await;
    }

    /// See [`super::Limiters::prune`].
    pub async fn prune(&self) {
        if let Err(err) = self.windows.prune().await {
            tracing::warn!(error = %err, "cannot prune the shared rate counters");
        }
    }

    /// `Err(seconds)` while `key` has had more failures than `budget`
    /// allows: the failure that exceeds it closes it.
    async fn gate(&self, budget: &Budget, key: &str) -> Result<(), u64> {
        match self.windows.held(budget, key).await {
            Ok(Some(wait)) => Err(wait),
            Ok(None) => Ok(()),
            Err(err) => {
                tracing::warn!(limit = budget.name, error = %err, "a shared rate limit cannot be read; the attempt passes");
                Ok(())
            }
        }
    }

    /// Counts one failure of `key`.
    async fn failed(&self, budget: &Budget, key: &str) {
        if let Err(err) = self.windows.spend(budget, key).await {
            tracing::warn!(limit = budget.name, error = %err, "cannot count for a shared rate limit");
        }
    }

    async fn is_known(&self, pair: &str) -> bool {
        matches!(self.windows.read(&KNOWN, pair).await, Ok((now, before)) if now + before > 0)
    }
}
