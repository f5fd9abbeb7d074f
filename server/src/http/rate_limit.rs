//! Rate limits, per instance, with GCRA (the `governor` crate):
//! - REST: per token and per client IP, requests per minute from the settings;
//! - login: every attempt per client IP, and failed attempts per account, to slow
//!   password guessing without locking out someone who signs in often;
//! - visitor tracking: events per minute per tenant, so one busy (or hostile) web
//!   page cannot flood the fact tables; a batch counts as its number of events.
//!
//! An exceeded limit answers 429 with `Retry-After`.

use std::{
    collections::HashMap,
    net::IpAddr,
    num::NonZeroU32,
    sync::Mutex,
    time::{Duration, Instant},
};

use governor::{clock::DefaultClock, state::keyed::DefaultKeyedStateStore, Quota, RateLimiter};

type Keyed<K> = RateLimiter<K, DefaultKeyedStateStore<K>, DefaultClock>;

/// Login attempts per client IP: a burst of 20, then one every 15 s.
const LOGIN_PER_IP_BURST: u32 = 20;
const LOGIN_PER_IP_PERIOD: Duration = Duration::from_secs(15);
/// Failed login attempts per account: a burst of 10, then one a minute.
const LOGIN_PER_ACCOUNT_BURST: u32 = 10;
const LOGIN_PER_ACCOUNT_PERIOD: Duration = Duration::from_secs(60);

/// The limiters of one instance.
pub struct Limiters {
    per_token: Option<Keyed<String>>,
    per_ip: Option<Keyed<IpAddr>>,
    track_events_per_tenant: Option<Keyed<String>>,
    login_per_ip: Keyed<IpAddr>,
    login_failures_per_account: Keyed<String>,
    /// Accounts whose failures ran out, and until when.
    login_blocked: Mutex<HashMap<String, Instant>>,
}

fn per_minute(n: u32) -> Option<Quota> {
    NonZeroU32::new(n).map(Quota::per_minute)
}

fn burst_then_every(burst: u32, period: Duration) -> Quota {
    Quota::with_period(period)
        .expect("non-zero period")
        .allow_burst(NonZeroU32::new(burst).expect("non-zero burst"))
}

impl Limiters {
    /// Limiters with the given REST limits (requests per minute; 0 = off) and
    /// tracking limit (events per minute per tenant; 0 = off).
    pub fn new(per_token_per_minute: u32, per_ip_per_minute: u32, track_events_per_minute: u32) -> Limiters {
        Limiters {
            per_token: per_minute(per_token_per_minute).map(RateLimiter::keyed),
            per_ip: per_minute(per_ip_per_minute).map(RateLimiter::keyed),
            track_events_per_tenant: per_minute(track_events_per_minute).map(RateLimiter::keyed),
            login_per_ip: RateLimiter::keyed(burst_then_every(LOGIN_PER_IP_BURST, LOGIN_PER_IP_PERIOD)),
            login_failures_per_account: RateLimiter::keyed(burst_then_every(
                LOGIN_PER_ACCOUNT_BURST,
                LOGIN_PER_ACCOUNT_PERIOD,
            )),
            login_blocked: Mutex::new(HashMap::new()),
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

    /// Checks a tracking batch of `events` events for a tenant; `Err(seconds)` when
    /// it must wait. A batch larger than the whole minute's allowance never fits.
    pub fn check_track(&self, tenant_id: &str, events: usize) -> Result<(), u64> {
        let Some(limiter) = &self.track_events_per_tenant else {
            return Ok(());
        };
        let Some(n) = u32::try_from(events).ok().and_then(NonZeroU32::new) else {
            return Ok(());
        };
        match limiter.check_key_n(&tenant_id.to_string(), n) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(wait_secs(not_until)),
            Err(_) => Err(60),
        }
    }

    /// Checks a login attempt from this IP for this account (an e-mail).
    pub fn check_login(&self, ip: IpAddr, account: &str) -> Result<(), u64> {
        let account = account.trim().to_lowercase();
        if let Some(until) = self.login_blocked.lock().ok().and_then(|b| b.get(&account).copied()) {
            let now = Instant::now();
            if until > now {
                return Err((until - now).as_secs().max(1));
            }
        }
        self.login_per_ip.check_key(&ip).map_err(wait_secs)?;
        Ok(())
    }

    /// Records a failed login for this account; enough of them block the account's
    /// logins for a while.
    pub fn login_failed(&self, account: &str) {
        let account = account.trim().to_lowercase();
        if let Err(not_until) = self.login_failures_per_account.check_key(&account) {
            let wait = Duration::from_secs(wait_secs(not_until));
            if let Ok(mut blocked) = self.login_blocked.lock() {
                blocked.insert(account, Instant::now() + wait);
            }
        }
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
        self.login_per_ip.retain_recent();
        self.login_failures_per_account.retain_recent();
        if let Ok(mut blocked) = self.login_blocked.lock() {
            let now = Instant::now();
            blocked.retain(|_, until| *until > now);
        }
    }
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
        let l = Limiters::new(2, 0, 0);
        let ip: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(l.check_rest(ip, Some("a")).is_ok());
        assert!(l.check_rest(ip, Some("a")).is_ok());
        let wait = l.check_rest(ip, Some("a")).unwrap_err();
        assert!((1..=60).contains(&wait));
        assert!(l.check_rest(ip, Some("b")).is_ok(), "other tokens are unaffected");
        assert!(l.check_rest(ip, None).is_ok(), "the IP limit is off");
    }

    #[test]
    fn failed_logins_block_the_account_only() {
        let l = Limiters::new(0, 0, 0);
        let ip: IpAddr = "10.0.0.1".parse().unwrap();
        for _ in 0..LOGIN_PER_ACCOUNT_BURST {
            assert!(l.check_login(ip, "Kim@Example.com").is_ok());
            l.login_failed("Kim@Example.com");
        }
        assert!(
            l.check_login(ip, "kim@example.com").is_ok(),
            "the burst is used up, not exceeded"
        );
        l.login_failed("kim@example.com");
        assert!(l.check_login(ip, "kim@example.com").is_err());
        assert!(l.check_login(ip, "other@example.com").is_ok());
    }

    #[test]
    fn successful_logins_do_not_count_against_the_account() {
        let l = Limiters::new(0, 0, 0);
        let ip: IpAddr = "10.0.0.2".parse().unwrap();
        for _ in 0..LOGIN_PER_IP_BURST {
            assert!(l.check_login(ip, "busy@example.com").is_ok());
        }
        assert!(
            l.check_login(ip, "busy@example.com").is_err(),
            "but every attempt counts per IP"
        );
    }

    #[test]
    fn tracking_counts_events_per_tenant() {
        let l = Limiters::new(0, 0, 150);
        assert!(l.check_track("t1", 100).is_ok());
        let wait = l.check_track("t1", 100).unwrap_err();
        assert!((1..=60).contains(&wait));
        assert!(l.check_track("t1", 50).is_ok(), "what is left still fits");
        assert!(l.check_track("t2", 100).is_ok(), "other tenants are unaffected");
        assert!(
            l.check_track("t3", 151).is_err(),
            "more than a minute's allowance never fits"
        );
        assert!(
            Limiters::new(0, 0, 0).check_track("t1", 100).is_ok(),
            "0 turns the limit off"
        );
    }
}
