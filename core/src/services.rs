//! The one entry to the domain: every REST handler, server function and CLI command
//! goes through a [`Services`]. Its methods live beside their subject
//! (`tenants.rs`, `users.rs`, `auth.rs`), each as an `impl Services` block.

use std::sync::Arc;

use tokio::sync::Notify;

use crate::{
    db::{Backend, Db},
    ids::{CustomerId, TenantId},
    key_cache::KeyCache,
    live::{LiveEvent, LiveHub, LiveUpdate},
    media_store::MediaStore,
    open_streams::OpenStreams,
    reports::zones::ZoneStates,
    sealing::Sealer,
};

/// Handle to the domain services; cheap to clone.
#[derive(Clone, Debug)]
pub struct Services {
    db: Db,
    writer: Db,
    public_url: Arc<str>,
    max_file_bytes: usize,
    live: LiveHub,
    outbox: Arc<Notify>,
    zone_states: ZoneStates,
    keys: KeyCache,
    sealer: Sealer,
    open_streams: OpenStreams,
    media: MediaStore,
}

impl Services {
    /// Services over an open (and migrated) database. Generated links start with
    /// `http://localhost:3000` until [`Services::with_public_url`] says otherwise.
    pub fn new(db: Db) -> Self {
        // The engines hear the audit log (the SETTING_CHANGED watchdogs).
        crate::audit::observe(crate::engine::watchdogs::setting_changed);
        Self {
            writer: db.writer(),
            db,
            public_url: Arc::from("http://localhost:3000"),
            max_file_bytes: crate::files::DEFAULT_MAX_FILE_BYTES,
            live: LiveHub::default(),
            outbox: Arc::new(Notify::new()),
            zone_states: ZoneStates::default(),
            keys: KeyCache::default(),
            sealer: Sealer::default(),
            open_streams: OpenStreams::default(),
            // Until `with_media_store` names a real one; `serve` always does.
            media: MediaStore::in_memory(),
        }
    }

    /// Sets the base URL of generated links (appointment, co-browsing, live view).
    pub fn with_public_url(mut self, url: &str) -> Self {
        self.public_url = Arc::from(url.trim_end_matches('/'));
        self
    }

    /// Seals the secrets Rapport must read back with the operator's keys (see
    /// [`crate::sealing`]). Without this they are stored as given.
    pub fn with_sealer(mut self, sealer: Sealer) -> Self {
        self.sealer = sealer;
        self
    }

    /// The operator's keys for secrets Rapport must read back.
    pub fn sealer(&self) -> &Sealer {
        &self.sealer
    }

    /// Sets the largest file a conversation accepts, in bytes (0: none).
    pub fn with_max_file_bytes(mut self, bytes: usize) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// Keeps media (chat files, session and call recordings) in `store`.
    pub fn with_media_store(mut self, store: MediaStore) -> Self {
        self.media = store;
        self
    }

    /// Where media objects live (see [`crate::media_store`]).
    pub fn media(&self) -> &MediaStore {
        &self.media
    }

    /// The largest file a conversation accepts, in bytes; 0 when files are off.
    pub fn max_file_bytes(&self) -> usize {
        self.max_file_bytes
    }

    /// The base URL of generated links, without a trailing slash.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The database: reads through [`with_db!`](crate::with_db) (read-only on
    /// SQLite), transactions through [`Db::begin`] (always on the writer).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The database for a write outside a transaction: on SQLite the single writer
    /// connection (see [`crate::db`]), on PostgreSQL the same pool as [`Services::db`].
    pub fn writer(&self) -> &Db {
        &self.writer
    }

    /// Live changes of this instance (widget and inbox streams subscribe here).
    pub fn live(&self) -> &LiveHub {
        &self.live
    }

    /// The public event streams open on this instance, per tenant.
    pub fn open_streams(&self) -> &OpenStreams {
        &self.open_streams
    }

    /// Signalled whenever a commit may have queued webhook deliveries; the delivery
    /// worker waits on it between polls.
    pub fn outbox_signal(&self) -> &Arc<Notify> {
        &self.outbox
    }

    /// Resolved API keys, when this backend keeps them (SQLite: one instance per
    /// file; see [`crate::key_cache`]).
    pub(crate) fn key_cache(&self) -> Option<&KeyCache> {
        (self.db.backend() == Backend::Sqlite).then_some(&self.keys)
    }

    /// A change that can alter what a token resolves to has committed (a key
    /// revoked, a user changed or deleted, a tenant deleted).
    pub(crate) fn keys_changed(&self) {
        self.keys.invalidate();
    }

    /// The last zone state read per tenant, which reports plan with (see
    /// [`crate::reports::zones`]).
    pub(crate) fn zone_states(&self) -> &ZoneStates {
        &self.zone_states
    }

    /// After a commit: wake the delivery worker, and tell live screens.
    pub(crate) fn after_commit(&self, tenant_id: &TenantId, customer_id: &CustomerId, event: LiveEvent) {
        self.outbox.notify_one();
        self.live.publish(LiveUpdate {
            tenant_id: tenant_id.clone(),
            customer_id: customer_id.clone(),
            event,
        });
    }

    /// After a commit that queued events but nothing live screens show.
    pub(crate) fn wake_outbox(&self) {
        self.outbox.notify_one();
    }
}
