//! The limiters of one instance, in memory, with GCRA (the `governor`
//! crate): what SQLite's single instance uses.

use rapport_core::ids::TenantId;
use std::{
    collections::HashMap,
    net::IpAddr,
    num::NonZeroU32,
    sync::Mutex,
    time::{Duration, Instant},
};

use governor::{clock::DefaultClock, state::keyed::DefaultKeyedStateStore, Quota, RateLimiter};

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>;

/// Failed login attempts per client IP: a burst of 20, then one every 15 s.
pub(super) const LOGIN_PER_IP_BURST: u32 = 20;
pub(super) const LOGIN_PER_IP_PERIOD: Duration = Duration::from_secs(15);
/// Failed login attempts per account from one IP: a burst of 10, then one a minute.
pub(super) const LOGIN_PER_ACCOUNT_BURST: u32 = 10;
pub(super) const LOGIN_PER_ACCOUNT_PERIOD: Duration = Duration::from_secs(60);
/// Failed login attempts per account from all addresses (a guesser with many):
/// a burst of 50, then one every 20 s. Addresses the account signed in from
/// within [`KNOWN_FOR`] pass regardless.
pub(super) const LOGIN_ACCOUNT_WIDE_BURST: u32 = 50;
pub(super) const LOGIN_ACCOUNT_WIDE_PERIOD: Duration = Duration::from_secs(20);
/// Wrong call passwords per join link (from anywhere): a burst of 30, then one
/// every 10 s.
pub(super) const CALL_PASSWORD_PER_LINK_BURST: u32 = 30;
pub(super) const CALL_PASSWORD_PER_LINK_PERIOD: Duration = Duration::from_secs(10);
/// Wrong call passwords per address (for any link): a burst of 10, then one a minute.
pub(super) const CALL_PASSWORD_PER_IP_BURST: u32 = 10;
pub(super) const CALL_PASSWORD_PER_IP_PERIOD: Duration = Duration::from_secs(60);
/// How long a successful sign-in makes its address known for the account.
pub(super) const KNOWN_FOR: Duration = Duration::from_secs(30 * 86_400);

/// The limiters of one instance.
pub struct LocalLimiters {
    per_token: Option<Keyed<String>>,
    per_ip: Option<Keyed<IpAddr>>,
    track_events_per_tenant: Option<Keyed<String>>,
    track_events_per_address: Option<Keyed<(String, IpAddr)>>,
    login_failures_per_ip: FailureGate<IpAddr>,
    login_failures_per_account: FailureGate<(String, IpAddr)>,
    login_failures_account_wide: FailureGate<String>,
    /// Where each account signed in, and until when that counts.
    known_addresses: Mutex<HashMap<(String, IpAddr), Instant>>,
    call_password_failures_per_link: FailureGate<String>,
    call_password_failures_per_ip: FailureGate<IpAddr>,
}

/// Counts failures per key; once a key's budget runs out, every attempt for it
/// is refused until the budget has a failure to spare again. Successes are not
/// counted, which a plain limiter checked on every attempt could not express.
struct FailureGate<K: std::hash::Hash + Eq + Clone> {
    failures: Keyed<K>,
    /// Keys whose failures ran out, and until when.
    blocked: Mutex<HashMap<K, Instant>>,
}

impl<K: std::hash::Hash + Eq + Clone> FailureGate<K> {
    fn new(quota: Quota) -> Self {
        FailureGate {
            failures: RateLimiter::keyed(quota),
            blocked: Mutex::new(HashMap::new()),
        }
    }

    /// `Err(seconds)` while the key is blocked.
    fn check(&self, key: &K) -> Result<(), u64> {
        if let Some(until) = self.blocked.lock().ok().and_then(|b| b.get(key).copied()) {
            let now = Instant::now();
            if until > now {
                return Err((until - now).as_secs().max(1));
            }
        }
        Ok(())
    }

    /// Counts a failure; the one that exceeds the budget blocks the key.
    fn failed(&self, key: K) {
        if let Err(not_until) = self.failures.check_key(&key) {
            let wait = Duration::from_secs(wait_secs(not_until));
            if let Ok(mut blocked) = self.blocked.lock() {
                blocked.insert(key, Instant::now() + wait);
            }
        }
    }

    fn prune(&self) {
        self.failures.retain_recent();
        if let Ok(mut blocked) = self.blocked.lock() {
            let now = Instant::now();
            blocked.retain(|_, until| *until > now);
        }
    }
}

fn per_minute(n: u32) -> Option<Quota> {
    NonZeroU32::new(n).map(Quota::per_minute)
}

fn burst_then_every(burst: u32, period: Duration) -> Quota {
    Quota::with_period(period)
        .expect("non-zero period")
        .allow_burst(NonZeroU32::new(burst).expect("non-zero burst"))
}

impl LocalLimiters {
    /// Limiters with the given REST limits (requests per minute; 0 = off) and
    /// tracking limit (events per minute per tenant; 0 = off).
    pub fn new(per_token_per_minute: u32, per_ip_per_minute: u32, track_events_per_minute: u32) -> LocalLimiters {
        LocalLimiters {
            per_token: per_minute(per_token_per_minute).map(RateLimiter::keyed),
            per_ip: per_minute(per_ip_per_minute).map(RateLimiter::keyed),
            track_events_per_tenant: per_minute(track_events_per_minute).map(RateLimiter::keyed),
            // A tenth of the tenant's minute, and never less than one full batch.
            track_events_per_address: (track_events_per_minute > 0)
                .then(|| per_minute((track_events_per_minute / 10).max(100)))
                .flatten()
                .map(RateLimiter::keyed),
            login_failures_per_ip: FailureGate::new(burst_then_every(LOGIN_PER_IP_BURST, LOGIN_PER_IP_PERIOD)),
            login_failures_per_account: FailureGate::new(burst_then_every(
                LOGIN_PER_ACCOUNT_BURST,
                LOGIN_PER_ACCOUNT_PERIOD,
            )),
            login_failures_account_wide: FailureGate::new(burst_then_every(
                LOGIN_ACCOUNT_WIDE_BURST,
                LOGIN_ACCOUNT_WIDE_PERIOD,
            )),
            known_addresses: Mutex::new(HashMap::new()),
            call_password_failures_per_link: FailureGate::new(burst_then_every(
                CALL_PASSWORD_PER_LINK_BURST,
                CALL_PASSWORD_PER_LINK_PERIOD,
            )),
            call_password_failures_per_ip: FailureGate::new(burst_then_every(
                CALL_PASSWORD_PER_IP_BURST,
                CALL_PASSWORD_PER_IP_PERIOD,
            )),
        }
    }

    /// Checks a REST request; `Err(seconds)` when it must wait. `token_digest` keys
    /// the token limit without keeping the token itself in memory.
    pub fn check_rest(&self, ip: IpAddr, token_digest: Option<&str>) -> Result<(), u64> {
        if let Some(limiter) = &self.per_ip {
            limiter.check_key(&ip).map_err(wait_secs)?;
        }
        if let (Some(limiter), Some(digest)) = (&self.per_token, token_digest) {
            limiter.check_key(&digest.to_string()).map_err(wait_secs)?;
        }
        Ok(())
    }

    /// Checks a tracking batch of `events` events for a tenant, from the
    /// visitor at `ip`; `Err(seconds)` when it must wait. A batch larger than
    /// the whole minute's allowance never fits.
    pub fn check_track(&self, tenant_id: &TenantId, ip: IpAddr, events: usize) -> Result<(), u64> {
        let Some(n) = u32::try_from(events).ok().and_then(NonZeroU32::new) else {
            return Ok(());
        };
        let take = |result: Result<Result<(), governor::NotUntil<_>>, _>| match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(wait_secs(not_until)),
            Err(_) => Err(60),
        };
        if let Some(limiter) = &self.track_events_per_address {
            take(limiter.check_key_n(&(tenant_id.to_string(), ip), n))?;
        }
        match &self.track_events_per_tenant {
            Some(limiter) => take(limiter.check_key_n(&tenant_id.to_string(), n)),
            None => Ok(()),
        }
    }

    /// Checks a login attempt from this IP for this account (an e-mail):
    /// `Err(seconds)` while the IP, the account at this IP, or (from an
    /// address the account never signed in from) the account as a whole has
    /// run out of failures.
    pub fn check_login(&self, ip: IpAddr, account: &str) -> Result<(), u64> {
        let account = account_key(account);
        self.login_failures_per_ip.check(&ip)?;
        let key = (account, ip);
        self.login_failures_per_account.check(&key)?;
        if self.is_known(&key) {
            return Ok(());
        }
        self.login_failures_account_wide.check(&key.0)
    }

    /// Records a failed login from this IP for this account; enough of them
    /// block that IP's logins, or this account's from that IP, for a while,
    /// and slow the account's logins from unknown addresses.
    pub fn login_failed(&self, ip: IpAddr, account: &str) {
        let account = account_key(account);
        self.login_failures_per_ip.failed(ip);
        self.login_failures_account_wide.failed(account.clone());
        self.login_failures_per_account.failed((account, ip));
    }

    /// Records a sign-in: the account's own address is known from now on, so
    /// a guesser elsewhere cannot hold its owner up there.
    pub fn login_succeeded(&self, ip: IpAddr, account: &str) {
        if let Ok(mut known) = self.known_addresses.lock() {
            known.insert((account_key(account), ip), Instant::now() + KNOWN_FOR);
        }
    }

    /// Checks a call password guess for appointment `link` from `ip`:
    /// `Err(seconds)` while the address, or the link, has run out of wrong
    /// guesses. Checked before the password is hashed.
    pub fn check_call_password(&self, link: &str, ip: IpAddr) -> Result<(), u64> {
        self.call_password_failures_per_ip.check(&ip)?;
        self.call_password_failures_per_link.check(&link.to_string())
    }

    /// Records a wrong call password for appointment `link` from `ip`.
    pub fn call_password_failed(&self, link: &str, ip: IpAddr) {
        self.call_password_failures_per_ip.failed(ip);
        self.call_password_failures_per_link.failed(link.to_string());
    }

    fn is_known(&self, key: &(String, IpAddr)) -> bool {
        self.known_addresses
            .lock()
            .ok()
            .and_then(|known| known.get(key).copied())
            .is_some_and(|until| until > Instant::now())
    }

    /// Forgets keys that are back at full capacity; run periodically so the maps
    /// do not grow without bound.
    pub fn prune(&self) {
        if let Some(l) = &self.per_token {
            l.retain_recent();
        }
        if let Some(l) = &self.per_ip {
            l.retain_recent();
        }
        if let Some(l) = &self.track_events_per_tenant {
            l.retain_recent();
        }
        if let Some(l) = &self.track_events_per_address {
            l.retain_recent();
        }
        self.login_failures_per_ip.prune();
        self.login_failures_per_account.prune();
        self.login_failures_account_wide.prune();
        self.call_password_failures_per_link.prune();
        self.call_password_failures_per_ip.prune();
        if let Ok(mut known) = self.known_addresses.lock() {
            let now = Instant::now();
            known.retain(|_, until| *until > now);
        }
    }
}

/// Accounts are e-mails, compared the way sign-in compares them.
pub(super) fn account_key(account: &str) -> String {
    account.trim().to_lowercase()
}

fn wait_secs(not_until: governor::NotUntil<governor::clock::QuantaInstant>) -> u64 {
    use governor::clock::Clock;
    not_until.wait_time_from(DefaultClock::default().now()).as_secs().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_limit_trips_and_reports_wait() {
        let l = LocalLimiters::new(2, 0, 0);
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(l.check_rest(ip, Some("a")).is_ok());
        assert!(l.check_rest(ip, Some("a")).is_ok());
        let wait = l.check_rest(ip, Some("a")).unwrap_err();
        assert!((1..=60).contains(&wait));
        assert!(l.check_rest(ip, Some("b")).is_ok(), "other tokens are unaffected");
        assert!(l.check_rest(ip, None).is_ok(), "the IP limit is off");
    }

    #[test]
    fn failed_logins_block_the_account_at_that_address_only() {
        let l = LocalLimiters::new(0, 0, 0);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..LOGIN_PER_ACCOUNT_BURST {
            assert!(l.check_login(ip, "Kim@Example.com").is_ok());
            l.login_failed(ip, "Kim@Example.com");
        }
        assert!(
            l.check_login(ip, "kim@example.com").is_ok(),
            "the burst is used up, not exceeded"
        );
        l.login_failed(ip, "kim@example.com");
        assert!(l.check_login(ip, "kim@example.com").is_err(), "this address is slowed");
        let owner: IpAddr = "10.0.0.9".parse().unwrap();
        assert!(l.check_login(owner, "kim@example.com").is_ok(), "the owner's is not");
        assert!(
            l.check_login(ip, "other@example.com").is_ok(),
            "the IP has failures to spare"
        );
    }

    #[test]
    fn many_addresses_slow_the_account_except_where_its_owner_signed_in() {
        let l = LocalLimiters::new(0, 0, 0);
        let owner: IpAddr = "192.0.2.1".parse().unwrap();
        l.login_succeeded(owner, "kim@example.com");
        for n in 0..=LOGIN_ACCOUNT_WIDE_BURST {
            let guesser = IpAddr::from([198, 51, 100, n as u8]);
            assert!(
                l.check_login(guesser, "kim@example.com").is_ok(),
                "one guess per address"
            );
            l.login_failed(guesser, "kim@example.com");
        }
        let fresh = IpAddr::from([203, 0, 113, 1]);
        assert!(l.check_login(fresh, "kim@example.com").is_err(), "a botnet is slowed");
        assert!(l.check_login(owner, "Kim@example.com").is_ok(), "the owner is not");
        assert!(l.check_login(fresh, "other@example.com").is_ok());
    }

    #[test]
    fn failed_logins_across_accounts_block_the_address() {
        let l = LocalLimiters::new(0, 0, 0);
        let ip: IpAddr = "10.0.0.3".parse().unwrap();
        for n in 0..=LOGIN_PER_IP_BURST {
            let account = format!("user{n}@example.com");
            assert!(l.check_login(ip, &account).is_ok(), "one guess per account");
            l.login_failed(ip, &account);
        }
        assert!(l.check_login(ip, "fresh@example.com").is_err(), "stuffing is slowed");
        let other_ip: IpAddr = "10.0.0.4".parse().unwrap();
        assert!(l.check_login(other_ip, "fresh@example.com").is_ok());
    }

    #[test]
    fn successful_logins_never_count() {
        let l = LocalLimiters::new(0, 0, 0);
        let office: IpAddr = "10.0.0.2".parse().unwrap();
        for n in 0..(LOGIN_PER_IP_BURST * 5) {
            assert!(
                l.check_login(office, &format!("agent{n}@example.com")).is_ok(),
                "a whole office signs in from one address"
            );
        }
    }

    #[test]
    fn tracking_counts_events_per_tenant() {
        let l = LocalLimiters::new(0, 0, 1500);
        let visitor = |n: u8| IpAddr::from([198, 51, 100, n]);
        for n in 0..10 {
            assert!(l.check_track(&TenantId::new("t1"), visitor(n), 100).is_ok());
            assert!(l.check_track(&TenantId::new("t1"), visitor(n), 50).is_ok());
        }
        let wait = l.check_track(&TenantId::new("t1"), visitor(20), 100).unwrap_err();
        assert!((1..=60).contains(&wait), "the tenant's minute is spent");
        assert!(
            l.check_track(&TenantId::new("t2"), visitor(20), 100).is_ok(),
            "other tenants are unaffected"
        );
        assert!(
            l.check_track(&TenantId::new("t3"), visitor(1), 1501).is_err(),
            "more than a minute's allowance never fits"
        );
        assert!(
            LocalLimiters::new(0, 0, 0)
                .check_track(&TenantId::new("t1"), visitor(1), 100)
                .is_ok(),
            "0 turns the limit off"
        );
    }

    #[test]
    fn one_address_spends_a_tenth_of_its_tenants_minute() {
        let l = LocalLimiters::new(0, 0, 6000);
        let flooder = IpAddr::from([203, 0, 113, 9]);
        assert!(l.check_track(&TenantId::new("shop"), flooder, 600).is_ok());
        assert!(
            l.check_track(&TenantId::new("shop"), flooder, 10).is_err(),
            "the flooder waits"
        );
        let visitor = IpAddr::from([198, 51, 100, 1]);
        assert!(
            l.check_track(&TenantId::new("shop"), visitor, 100).is_ok(),
            "real visitors go on"
        );
    }
}
