//! Each workspace's share of the instance for its public endpoints.
//!
//! The widget, tracking, recording and file endpoints answer any page that has
//! a workspace's widget key, which is not a secret. The per-tenant bounds
//! ([`rapport_core::limits`]) cap what such callers make the server keep, but a
//! flood of requests that are each refused still costs the CPU and the database
//! writer that answer them, and every other workspace waits behind it.
//!
//! So a workspace's public requests run at most `RAPPORT_PUBLIC_CONCURRENCY`
//! at a time on an instance (by default half its cores, at least one). Further
//! ones wait their turn, in order. A request that would be the
//! [`MAX_WAITING`]th waiter, that waits longer than [`MAX_WAIT`], or whose body
//! would make the waiting requests' bodies pass [`MAX_WAITING_BYTES`] gets 429
//! `workspace_busy` with `Retry-After`. A flooding page thereby slows down only
//! its own workspace: its requests queue behind each other while the
//! neighbours' run.
//!
//! A body is read before its request waits: a turn is CPU and database time,
//! and a visitor on a slow network must not hold their workspace's turn while
//! their batch trickles in. File uploads are the exception: they stream to
//! storage as they arrive, and are bounded by `fileBytes` and the per-address
//! limits instead.
//!
//! The share is keyed by the widget key as sent: a key that names no workspace
//! is refused by the handler at the cost of one indexed read, and each key has
//! exactly one spelling that works.
//!
//! This module is the bookkeeping; the layer that spends it is
//! `http::middleware::public_share`.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::Duration,
};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Requests of one workspace that may wait for their turn at once.
pub const MAX_WAITING: usize = 1024;
/// The longest a request waits for its workspace's turn.
pub const MAX_WAIT: Duration = Duration::from_secs(10);
/// The bodies of all waiting requests of the instance, together, in bytes.
pub const MAX_WAITING_BYTES: usize = 64 * 1024 * 1024;

/// The shares of every workspace with public requests in flight.
pub struct PublicShares {
    per_workspace: usize,
    /// [`MAX_WAIT`], but in tests.
    max_wait: Duration,
    shares: Mutex<HashMap<String, Arc<Share>>>,
    /// Bytes of the bodies of requests waiting now.
    waiting_bytes: AtomicUsize,
}

struct Share {
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// Why a request does not get its turn.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// [`MAX_WAITING`] requests of the workspace already wait.
    QueueFull,
    /// It waited [`MAX_WAIT`].
    WaitedTooLong,
    /// The waiting requests' bodies would pass [`MAX_WAITING_BYTES`].
    TooMuchWaiting,
}

impl PublicShares {
    /// Shares of `per_workspace` requests at a time (0: unlimited).
    pub fn new(per_workspace: usize) -> PublicShares {
        PublicShares {
            per_workspace,
            max_wait: MAX_WAIT,
            shares: Mutex::default(),
            waiting_bytes: AtomicUsize::new(0),
        }
    }

    /// The default share: half this machine's cores, at least one.
    pub fn default_concurrency() -> usize {
        std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
    }

    /// Waits for a turn of the workspace whose widget key is `key`, for a
    /// request with a body of `body_bytes`; the turn lasts as long as the permit
    /// is held.
    pub async fn enter(&self, key: &str, body_bytes: usize) -> Result<Option<OwnedSemaphorePermit>, Refused> {
        if self.per_workspace == 0 {
            return Ok(None);
        }
        let share = {
            let mut shares = self.shares.lock().expect("shares lock");
            match shares.get(key) {
                Some(share) => share.clone(),
                // The key is copied only for a workspace's first request in flight.
                None => {
                    let share = Arc::new(Share {
                        running: Arc::new(Semaphore::new(self.per_workspace)),
                        waiting: AtomicUsize::new(0),
                    });
                    shares.insert(key.to_string(), share.clone());
                    share
                }
            }
        };
        if let Ok(permit) = share.running.clone().try_acquire_owned() {
            return Ok(Some(permit));
        }
        if share.waiting.fetch_add(1, Ordering::SeqCst) >= MAX_WAITING {
            share.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Refused::QueueFull);
        }
        if self.waiting_bytes.fetch_add(body_bytes, Ordering::SeqCst) + body_bytes > MAX_WAITING_BYTES {
            self.waiting_bytes.fetch_sub(body_bytes, Ordering::SeqCst);
            share.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Refused::TooMuchWaiting);
        }
        let turn = tokio::time::timeout(self.max_wait, share.running.clone().acquire_owned()).await;
        self.waiting_bytes.fetch_sub(body_bytes, Ordering::SeqCst);
        share.waiting.fetch_sub(1, Ordering::SeqCst);
        match turn {
            Ok(Ok(permit)) => Ok(Some(permit)),
            // The semaphore is never closed.
            Ok(Err(_)) => Ok(None),
            Err(_) => Err(Refused::WaitedTooLong),
        }
    }

    /// Forgets the shares of workspaces with nothing in flight.
    pub fn prune(&self) {
        let mut shares = self.shares.lock().expect("shares lock");
        shares.retain(|_, share| Arc::strong_count(share) > 1 || Arc::strong_count(&share.running) > 1);
    }

    /// Workspaces with a share held now (for tests).
    pub fn tracked(&self) -> usize {
        self.shares.lock().expect("shares lock").len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shares(per_workspace: usize) -> Arc<PublicShares> {
        Arc::new(PublicShares {
            max_wait: Duration::from_millis(300),
            ..PublicShares::new(per_workspace)
        })
    }

    #[tokio::test]
    async fn a_workspace_runs_its_share_and_the_rest_wait_in_turn() {
        let shares = shares(2);
        let a = shares.enter("wk_a", 0).await.unwrap();
        let b = shares.enter("wk_a", 0).await.unwrap();
        // The neighbour is not held up by the first workspace's turns.
        assert!(shares.enter("wk_b", 0).await.unwrap().is_some());
        // A third of the first waits, and gets the turn the first gives back.
        let waiting = tokio::spawn({
            let shares = shares.clone();
            async move { shares.enter("wk_a", 0).await.map(|p| p.is_some()) }
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!waiting.is_finished());
        drop(a);
        assert_eq!(waiting.await.unwrap(), Ok(true));
        // One that waits too long is refused.
        let _c = shares.enter("wk_a", 0).await.unwrap();
        assert_eq!(shares.enter("wk_a", 0).await.unwrap_err(), Refused::WaitedTooLong);
        drop((b, _c));
        shares.prune();
        assert_eq!(shares.tracked(), 0);
    }

    #[tokio::test]
    async fn waiting_bodies_are_bounded_across_workspaces() {
        let shares = shares(1);
        let _a = shares.enter("wk_a", 0).await.unwrap();
        let _b = shares.enter("wk_b", 0).await.unwrap();
        let half = tokio::spawn({
            let shares = shares.clone();
            async move { shares.enter("wk_a", MAX_WAITING_BYTES / 2 + 1).await.is_ok() }
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(
            shares.enter("wk_b", MAX_WAITING_BYTES / 2).await.unwrap_err(),
            Refused::TooMuchWaiting
        );
        drop(_a);
        assert!(half.await.unwrap());
    }

    #[tokio::test]
    async fn zero_means_no_share() {
        let shares = PublicShares::new(0);
        assert!(shares.enter("wk_a", 0).await.unwrap().is_none());
        assert_eq!(shares.tracked(), 0);
    }
}
