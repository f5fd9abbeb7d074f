//! Media in object storage: the bytes of chat files, session-recording
//! batches and call-recording chunks, behind one small interface over the
//! `object_store` crate.
//!
//! - **Where.** A directory under the data dir by default (`file://…`), or an
//!   S3-compatible bucket (`s3://bucket/prefix`, credentials and endpoint from
//!   the `AWS_*` settings); `memory:` keeps them in the process (benchmarks and
//!   tools only).
//! - **Rows keep keys.** Each row of `chat_files`, `recording_chunks` and
//!   `conference_recording_chunks` names its object in `blob_key`. A row still
//!   holding its `data` was written before objects existed and is read from the
//!   row until `rapport admin migrate-media` ([`migrate`]) moves it.
//! - **Object first, row second.** A write puts its object, then commits the
//!   row that names it; a write that fails after the put deletes the object
//!   again. Only a process that dies between the two leaves an object no row
//!   names, and [`cleanup`]'s hourly sweep finds it: keys start with their kind
//!   and the hour they were written (`files/2026112916/{tenant}/{random}`), so
//!   the sweep lists one hour's uploads, never the whole bucket.
//! - **Deletes go through the database.** Deleting a row that names an object,
//!   by hand or by any cascade (an erased customer, a deleted tenant or
//!   appointment, retention), queues its key in `media_garbage` in the same
//!   transaction (a trigger, migration 0045), and the media cleanup job
//!   deletes the objects. So nothing in the database can go without its
//!   object going too, and a delete that rolls back keeps it.

pub mod cleanup;
pub mod migrate;

use std::sync::Arc;

use bytes::Bytes;
use chrono::{TimeZone, Utc};
use futures_util::{stream::BoxStream, StreamExt, TryStreamExt};
use object_store::{
    aws::{AmazonS3Builder, AmazonS3ConfigKey},
    local::LocalFileSystem,
    memory::InMemory,
    path::Path,
    prefix::PrefixStore,
    ObjectStore, ObjectStoreExt, PutPayload,
};

use crate::{
    crypto::random_token,
    error::{CoreError, CoreResult},
    ids::TenantId,
};

/// What an object holds; the first part of its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MediaKind {
    /// A file sent in a conversation (`chat_files`).
    File,
    /// One batch of a recorded session's events, gzip-compressed
    /// (`recording_chunks`).
    Recording,
    /// One chunk of a call recording's WebM file (`conference_recording_chunks`).
    CallRecording,
}

impl MediaKind {
    /// Every kind.
    pub const ALL: [MediaKind; 3] = [MediaKind::File, MediaKind::Recording, MediaKind::CallRecording];

    /// The first part of its objects' keys.
    pub fn prefix(self) -> &'static str {
        match self {
            MediaKind::File => "files",
            MediaKind::Recording => "recordings",
            MediaKind::CallRecording => "calls",
        }
    }

    /// The table whose rows name objects of this kind (in `blob_key`).
    pub(crate) fn table(self) -> &'static str {
        match self {
            MediaKind::File => "chat_files",
            MediaKind::Recording => "recording_chunks",
            MediaKind::CallRecording => "conference_recording_chunks",
        }
    }
}

/// One stored object, as a listing gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredObject {
    /// Its key.
    pub key: String,
    /// Its size in bytes.
    pub size: u64,
    /// When it was written, in ms since the epoch.
    pub written_at: i64,
}

/// An object's bytes as a stream of pieces, for a response body.
pub type ObjectStream = BoxStream<'static, std::io::Result<Bytes>>;

/// Where media objects live. Cloning shares the store.
#[derive(Clone)]
pub struct MediaStore {
    inner: Arc<dyn ObjectStore>,
    /// Where, for logs: the URL without credentials.
    location: Arc<str>,
}

impl std::fmt::Debug for MediaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaStore").field("location", &self.location).finish()
    }
}

/// The hour an object was written, as its key's second part (`YYYYMMDDHH`, UTC).
pub fn hour_part(at_ms: i64) -> String {
    Utc.timestamp_millis_opt(at_ms)
        .single()
        .unwrap_or_default()
        .format("%Y%m%d%H")
        .to_string()
}

fn store_error(action: &str, key: &str, e: object_store::Error) -> CoreError {
    CoreError::Internal(format!("media store: cannot {action} {key}: {e}"))
}

fn parse_key(key: &str) -> CoreResult<Path> {
    Path::parse(key).map_err(|e| CoreError::Internal(format!("media store: bad key {key}: {e}")))
}

impl MediaStore {
    /// Objects kept in this process's memory, gone when it ends: for
    /// benchmarks and tools, never for a served instance.
    pub fn in_memory() -> Self {
        Self {
            inner: Arc::new(InMemory::new()),
            location: Arc::from("memory:"),
        }
    }

    /// Objects as files under `dir`, which is created if missing.
    pub fn local(dir: &std::path::Path) -> CoreResult<Self> {
        std::fs::create_dir_all(dir)
            .map_err(|e| CoreError::Internal(format!("media store: cannot create {}: {e}", dir.display())))?;
        let store = LocalFileSystem::new_with_prefix(dir)
            .map_err(|e| CoreError::Internal(format!("media store: {}: {e}", dir.display())))?
            // Deleting a recording's last object removes its empty folders.
            .with_automatic_cleanup(true);
        Ok(Self {
            inner: Arc::new(store),
            location: Arc::from(format!("file://{}", dir.display())),
        })
    }

    /// The store a URL names: `file:///absolute/dir`, `s3://bucket` or
    /// `s3://bucket/prefix`, or `memory:`. For S3, `options` are the `AWS_*`
    /// settings by name (`AWS_ENDPOINT`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `AWS_ALLOW_HTTP`, …), as
    /// `object_store` reads them; names it does not know are ignored.
    pub fn open<K: AsRef<str>, V: Into<String>>(
        url: &str,
        options: impl IntoIterator<Item = (K, V)>,
    ) -> CoreResult<Self> {
        let bad = |why: &str| CoreError::Internal(format!("media store URL {url}: {why}"));
        if url == "memory:" {
            return Ok(Self::in_memory());
        }
        if let Some(dir) = url.strip_prefix("file://") {
            if !dir.starts_with('/') {
                return Err(bad("give an absolute path, as file:///var/lib/rapport/media"));
            }
            return Self::local(std::path::Path::new(dir));
        }
        let Some(rest) = url.strip_prefix("s3://") else {
            return Err(bad("use file:///dir or s3://bucket[/prefix]"));
        };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() {
            return Err(bad("name the bucket"));
        }
        let mut builder = AmazonS3Builder::new().with_bucket_name(bucket);
        for (name, value) in options {
            if let Ok(key) = name.as_ref().to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
                if key != AmazonS3ConfigKey::Bucket {
                    builder = builder.with_config(key, value);
                }
            }
        }
        let s3 = builder.build().map_err(|e| bad(&e.to_string()))?;
        let prefix = prefix.trim_matches('/');
        let inner: Arc<dyn ObjectStore> = if prefix.is_empty() {
            Arc::new(s3)
        } else {
            Arc::new(PrefixStore::new(s3, parse_key(prefix)?))
        };
        Ok(Self {
            inner,
            location: Arc::from(format!("s3://{bucket}/{prefix}").trim_end_matches('/')),
        })
    }

    /// Where the objects are, for logs (no credentials).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// A new, unused key for an object of `kind` of a tenant, written now:
    /// `{kind}/{hour}/{tenant}/{random}`.
    pub fn new_key(kind: MediaKind, tenant_id: &TenantId, now_ms: i64) -> String {
        Path::from_iter([kind.prefix(), &hour_part(now_ms), tenant_id.as_str(), &random_token(16)]).to_string()
    }

    /// Stores `bytes` as `key`.
    pub async fn put(&self, key: &str, bytes: Bytes) -> CoreResult<()> {
        self.inner
            .put(&parse_key(key)?, PutPayload::from_bytes(bytes))
            .await
            .map_err(|e| store_error("write", key, e))?;
        Ok(())
    }

    /// All of an object.
    pub async fn get(&self, key: &str) -> CoreResult<Bytes> {
        let got = self
            .inner
            .get(&parse_key(key)?)
            .await
            .map_err(|e| store_error("read", key, e))?;
        got.bytes().await.map_err(|e| store_error("read", key, e))
    }

    /// An object as a stream of pieces, with its size: what a download sends
    /// without holding the object in memory.
    pub async fn stream(&self, key: &str) -> CoreResult<(u64, ObjectStream)> {
        let got = self
            .inner
            .get(&parse_key(key)?)
            .await
            .map_err(|e| store_error("read", key, e))?;
        let size = got.meta.size;
        let stream = got.into_stream().map_err(std::io::Error::other).boxed();
        Ok((size, stream))
    }

    /// Deletes an object; one already gone is not an error.
    pub async fn delete(&self, key: &str) -> CoreResult<()> {
        match self.inner.delete(&parse_key(key)?).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(store_error("delete", key, e)),
        }
    }

    /// Deletes an object, logging (not returning) an error: for a write that
    /// failed after storing it, whose own error is the one to report; the
    /// hourly sweep deletes what this could not. See
    /// [`Services::forget_object`](crate::Services::forget_object).
    pub async fn forget(&self, key: &str) {
        if let Err(e) = self.delete(key).await {
            tracing::warn!(error = %e, "cannot delete the object of a write that failed");
        }
    }

    /// Every object whose key starts with `prefix` (all with `None`).
    pub async fn list(&self, prefix: Option<&str>) -> CoreResult<Vec<StoredObject>> {
        let prefix = prefix.map(parse_key).transpose()?;
        self.inner
            .list(prefix.as_ref())
            .map_ok(|meta| StoredObject {
                key: meta.location.to_string(),
                size: meta.size,
                written_at: meta.last_modified.timestamp_millis(),
            })
            .try_collect()
            .await
            .map_err(|e| store_error("list", "objects", e))
    }
}

/// Bytes a row holds itself (written before objects existed) or names by key.
pub(crate) enum RowMedia {
    /// In the row.
    Inline(Vec<u8>),
    /// In the media store.
    Object(String),
}

impl RowMedia {
    /// From a row's `data` and `blob_key` columns (one of them is set: a
    /// check constraint holds it).
    pub(crate) fn from_columns(data: Option<Vec<u8>>, blob_key: Option<String>) -> CoreResult<Self> {
        match (data, blob_key) {
            (_, Some(key)) => Ok(RowMedia::Object(key)),
            (Some(data), None) => Ok(RowMedia::Inline(data)),
            (None, None) => Err(CoreError::Internal("a media row holds neither bytes nor a key".into())),
        }
    }

    /// The bytes, read from the store when the row names an object.
    pub(crate) async fn read(self, store: &MediaStore) -> CoreResult<Vec<u8>> {
        match self {
            RowMedia::Inline(data) => Ok(data),
            RowMedia::Object(key) => Ok(store.get(&key).await?.to_vec()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_start_with_their_kind_and_hour() {
        // 2026-11-29 16:58:04 UTC
        let key = MediaStore::new_key(MediaKind::File, &TenantId::from("acme"), 1_795_971_484_000);
        let parts: Vec<&str> = key.split('/').collect();
        assert_eq!(parts[..3], ["files", "2026112916", "acme"]);
        assert_eq!(parts[3].len(), 22, "16 random bytes in base64url");
        assert_ne!(
            key,
            MediaStore::new_key(MediaKind::File, &TenantId::from("acme"), 1_795_971_484_000)
        );
    }

    #[test]
    fn urls_name_the_store() {
        let none: [(&str, &str); 0] = [];
        assert!(MediaStore::open("file://relative/dir", none).is_err());
        assert!(MediaStore::open("ftp://host/dir", none).is_err());
        assert!(MediaStore::open("s3://", none).is_err());
        assert_eq!(MediaStore::open("memory:", none).unwrap().location(), "memory:");
        let s3 = MediaStore::open(
            "s3://media/rapport/",
            [
                ("AWS_ENDPOINT", "http://127.0.0.1:3900"),
                ("AWS_ALLOW_HTTP", "true"),
                ("HOME", "/root"),
            ],
        )
        .unwrap();
        assert_eq!(s3.location(), "s3://media/rapport");
    }

    #[tokio::test]
    async fn objects_are_written_read_listed_and_deleted() {
        let dir = tempfile::TempDir::new().unwrap();
        let store = MediaStore::local(dir.path()).unwrap();
        let key = MediaStore::new_key(MediaKind::Recording, &TenantId::from("t1"), 0);
        store.put(&key, Bytes::from_static(b"hello")).await.unwrap();
        assert_eq!(store.get(&key).await.unwrap(), Bytes::from_static(b"hello"));
        let (size, stream) = store.stream(&key).await.unwrap();
        assert_eq!(size, 5);
        let pieces: Vec<Bytes> = stream.try_collect().await.unwrap();
        assert_eq!(pieces.concat(), b"hello");
        let listed = store.list(Some("recordings")).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].key.as_str(), listed[0].size), (key.as_str(), 5));
        assert!(store.list(Some("files")).await.unwrap().is_empty());
        store.delete(&key).await.unwrap();
        store.delete(&key).await.unwrap();
        assert!(store.get(&key).await.is_err());
        assert!(store.list(None).await.unwrap().is_empty());
    }
}
