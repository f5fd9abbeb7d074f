//! API keys this instance has resolved, kept in memory on SQLite.
//!
//! Resolving a bearer token is a statement, and on SQLite every statement is a
//! hop to a database thread and back, which measured as most of the cost of a
//! small authenticated read. SQLite has one instance per file, so this instance
//! sees every change that can alter a key's answer (a revocation, a deleted or
//! changed user, a deleted tenant): each bumps the [`KeyCache`]'s epoch, and an
//! entry resolved under an older epoch is never used again. A revocation thus
//! holds from the moment it commits, as before. On PostgreSQL, where several
//! instances share the database, nothing is cached: every request reads its key.
//!
//! The cache holds at most [`KEY_CACHE_CAPACITY`] keys and starts afresh when
//! full, so it cannot grow with the number of tokens tried.

use std::{
    collections::HashMap,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};

use crate::auth::Principal;

/// Most keys kept at once.
pub const KEY_CACHE_CAPACITY: usize = 4096;

/// Resolved keys by token digest (see the module docs).
#[derive(Debug, Clone, Default)]
pub struct KeyCache(Arc<Inner>);

#[derive(Debug, Default)]
struct Inner {
    epoch: AtomicU64,
    entries: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug, Clone)]
struct Entry {
    principal: Principal,
    epoch: u64,
    /// When the key's `last_used_at` was last written (unix ms).
    touched_at: i64,
}

impl KeyCache {
    /// The current epoch: read it before resolving a key, and hand it to
    /// [`KeyCache::put`], so a change committed meanwhile makes the entry stale.
    pub fn epoch(&self) -> u64 {
        self.0.epoch.load(Ordering::Acquire)
    }

    /// The principal of `digest` and when its key was last touched, if it was
    /// resolved since the last change.
    pub fn get(&self, digest: &str) -> Option<(Principal, i64)> {
        let epoch = self.epoch();
        let entries = self.0.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(digest)
            .filter(|e| e.epoch == epoch)
            .map(|e| (e.principal.clone(), e.touched_at))
    }

    /// Keeps what `digest` resolved to under `epoch`.
    pub fn put(&self, digest: &str, principal: Principal, epoch: u64, touched_at: i64) {
        let mut entries = self.0.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= KEY_CACHE_CAPACITY && !entries.contains_key(digest) {
            entries.clear();
        }
        entries.insert(
            digest.to_string(),
            Entry {
                principal,
                epoch,
                touched_at,
            },
        );
    }

    /// Something that can change a key's answer has committed: forget every key.
    pub fn invalidate(&self) {
        self.0.epoch.fetch_add(1, Ordering::AcqRel);
        self.0.entries.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// How many keys are kept (for tests).
    pub fn len(&self) -> usize {
        self.0.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tenant(key: &str) -> Principal {
        Principal::Tenant {
            tenant_id: "t".into(),
            key_id: key.into(),
        }
    }

    #[test]
    fn a_change_makes_every_entry_stale_even_one_resolved_during_it() {
        let cache = KeyCache::default();
        let before = cache.epoch();
        cache.put("a", tenant("a"), before, 1);
        assert_eq!(cache.get("a").map(|(p, _)| p), Some(tenant("a")));
        // Resolved under the old epoch, stored after the change: never served.
        let during = cache.epoch();
        cache.invalidate();
        cache.put("b", tenant("b"), during, 1);
        assert!(cache.get("a").is_none());
        assert!(cache.get("b").is_none());
        cache.put("b", tenant("b"), cache.epoch(), 1);
        assert!(cache.get("b").is_some());
    }

    #[test]
    fn it_is_bounded() {
        let cache = KeyCache::default();
        for n in 0..KEY_CACHE_CAPACITY + 10 {
            cache.put(&n.to_string(), tenant("k"), cache.epoch(), 0);
        }
        assert!(cache.len() <= KEY_CACHE_CAPACITY);
    }
}
