//! Rate limits:
//! - REST: per token and per client IP, requests per minute from the settings;
//! - login: failed attempts per client IP, per account from one IP, and per
//!   account from addresses it never signed in from. Successful sign-ins never
//!   count, so a whole office behind one NAT address can sign in at nine
//!   o'clock, while guessing (one account or many from one address, or one
//!   account from many) is slowed. A guesser slows down only themselves: the
//!   owner, at an address they signed in from before, is never held up by
//!   someone else's failures;
//! - visitor tracking: events per minute per tenant, so one busy (or hostile) web
//!   page cannot flood the fact tables; a batch counts as its number of events.
//!   One address may use a tenth of its tenant's minute, so a single flooder
//!   cannot spend the allowance of the tenant's real visitors;
//! - calls: wrong passwords per join link and per address, checked before a
//!   guess is hashed.
//!
//! An exceeded limit answers 429 with `Retry-After`.
//!
//! Where they are counted depends on how many instances there can be: with
//! SQLite (one instance) in memory ([`local`]), with PostgreSQL in the
//! database that every instance shares, a lease at a time ([`shared`]), so two
//! instances allow what one would.

mod local;
mod shared;

use std::{net::IpAddr, sync::Arc};

pub use local::LocalLimiters;
use rapport_core::{ids::TenantId, rate_windows::RateWindows};
pub use shared::SharedLimiters;

/// The limiters of an instance: its own, or shared with the other instances.
pub enum Limiters {
    /// In this process's memory (SQLite: the only instance). Boxed: its
    /// limiters are large, and the enum lives once per instance.
    Local(Box<LocalLimiters>),
    /// In the shared database (PostgreSQL).
    Shared(SharedLimiters),
}

impl Limiters {
    /// In-memory limiters with the given REST limits (requests per minute; 0 =
    /// off) and tracking limit (events per minute per tenant; 0 = off).
    pub fn new(per_token_per_minute: u32, per_ip_per_minute: u32, track_events_per_minute: u32) -> Limiters {
        Limiters::Local(Box::new(LocalLimiters::new(
            per_token_per_minute,
            per_ip_per_minute,
            track_events_per_minute,
        )))
    }

    /// The same limits, counted in `windows` and so shared by every instance
    /// on its database.
    pub fn shared(
        windows: Arc<RateWindows>,
        per_token_per_minute: u32,
        per_ip_per_minute: u32,
        track_events_per_minute: u32,
    ) -> Limiters {
        Limiters::Shared(SharedLimiters::new(
            windows,
            per_token_per_minute,
            per_ip_per_minute,
            track_events_per_minute,
        ))
    }

    /// Checks a REST request; `Err(seconds)` when it must wait. `token_digest` keys
    /// the token limit without keeping the token itself anywhere.
    pub async fn check_rest(&self, ip: IpAddr, token_digest: Option<&str>) -> Result<(), u64> {
        match self {
            Limiters::Local(l) => l.check_rest(ip, token_digest),
            Limiters::Shared(s) => s.check_rest(ip, token_digest).await,
        }
    }

    /// Checks a tracking batch of `events` events for a tenant, from the
    /// visitor at `ip`; `Err(seconds)` when it must wait. A batch larger than
    /// the whole minute's allowance never fits.
    pub async fn check_track(&self, tenant_id: &TenantId, ip: IpAddr, events: usize) -> Result<(), u64> {
        match self {
            Limiters::Local(l) => l.check_track(tenant_id, ip, events),
            Limiters::Shared(s) => s.check_track(tenant_id, ip, events).await,
        }
    }

    /// Checks a login attempt from this IP for this account (an e-mail):
    /// `Err(seconds)` while the IP, the account at this IP, or (from an
    /// address the account never signed in from) the account as a whole has
    /// run out of failures.
    pub async fn check_login(&self, ip: IpAddr, account: &str) -> Result<(), u64> {
        match self {
            Limiters::Local(l) => l.check_login(ip, account),
            Limiters::Shared(s) => s.check_login(ip, account).await,
        }
    }

    /// Records a failed login from this IP for this account.
    pub async fn login_failed(&self, ip: IpAddr, account: &str) {
        match self {
            Limiters::Local(l) => l.login_failed(ip, account),
            Limiters::Shared(s) => s.login_failed(ip, account).await,
        }
    }

    /// Records a sign-in: the account's own address is known from now on, so
    /// a guesser elsewhere cannot hold its owner up there.
    pub async fn login_succeeded(&self, ip: IpAddr, account: &str) {
        match self {
            Limiters::Local(l) => l.login_succeeded(ip, account),
            Limiters::Shared(s) => s.login_succeeded(ip, account).await,
        }
    }

    /// Checks a call password guess for appointment `link` from `ip`:
    /// `Err(seconds)` while the address, or the link, has run out of wrong
    /// guesses. Checked before the password is hashed.
    pub async fn check_call_password(&self, link: &str, ip: IpAddr) -> Result<(), u64> {
        match self {
            Limiters::Local(l) => l.check_call_password(link, ip),
            Limiters::Shared(s) => s.check_call_password(link, ip).await,
        }
    }

    /// Records a wrong call password for appointment `link` from `ip`.
    pub async fn call_password_failed(&self, link: &str, ip: IpAddr) {
        match self {
            Limiters::Local(l) => l.call_password_failed(link, ip),
            Limiters::Shared(s) => s.call_password_failed(link, ip).await,
        }
    }

    /// Forgets what no limit needs any more; run periodically so that memory
    /// (and the shared table) do not grow without bound.
    pub async fn prune(&self) {
        match self {
            Limiters::Local(l) => l.prune(),
            Limiters::Shared(s) => s.prune().await,
        }
    }
}
