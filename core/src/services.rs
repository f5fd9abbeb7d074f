//! The one entry to the domain: every REST handler, server function and CLI command
//! goes through a [`Services`]. Its methods live beside their subject
//! (`tenants.rs`, `users.rs`, `auth.rs`), each as an `impl Services` block.

use crate::db::Db;

use std::sync::Arc;

/// Handle to the domain services; cheap to clone.
#[derive(Clone, Debug)]
pub struct Services {
    db: Db,
    public_url: Arc<str>,
}

impl Services {
    /// Services over an open (and migrated) database. Generated links start with
    /// `http://localhost:3000` until [`Services::with_public_url`] says otherwise.
    pub fn new(db: Db) -> Self {
        Self {
            db,
            public_url: Arc::from("http://localhost:3000"),
        }
    }

    /// Sets the base URL of generated links (appointment, co-browsing, live view).
    pub fn with_public_url(mut self, url: &str) -> Self {
        self.public_url = Arc::from(url.trim_end_matches('/'));
        self
    }

    /// The base URL of generated links, without a trailing slash.
    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// The database, for health checks and shutdown.
    pub fn db(&self) -> &Db {
        &self.db
    }
}
