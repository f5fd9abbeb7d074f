//! Files sent in conversations: a visitor's from the widget, an agent's from the
//! inbox. Each becomes a `FILE` message whose `url` is the file's download link.
//!
//! - The bytes live in the media store (see [`crate::media_store`]), and the
//!   row in `chat_files` names them, so every instance that shares the
//!   database and the store serves every file, and a file goes when its
//!   customer (or tenant) is deleted. A download streams the object through
//!   Rapport rather than redirecting to the store: the link stays the only
//!   credential, and the response keeps its sandboxing headers.
//! - The link is a capability: `{public URL}/files/{token}/{name}`, with 32
//!   random bytes in the token. It grants that one file and nothing else, the
//!   way the message that carries it is shared with the visitor, the agents and
//!   the webhook receivers alike. Only the token's digest is stored.
//! - The file is stored before its message. Should the message fail, the file
//!   is deleted again, so nothing is kept that no message points to.

use bytes::Bytes;
use futures_util::StreamExt;

use crate::{
    conversations::Message,
    crypto::{random_token, token_digest},
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    media_store::{MediaKind, MediaStore, ObjectStream},
    time::now_ms,
    validate::Checks,
    with_db, Services,
};

/// The largest file accepted unless configured otherwise (10 MiB).
pub const DEFAULT_MAX_FILE_BYTES: usize = 10 * 1024 * 1024;
/// Longest file name kept, in characters.
const MAX_NAME_CHARS: usize = 200;

/// A file as it arrives: its name, the type the sender gave, and its bytes.
#[derive(Debug, Clone, Copy)]
pub struct FileUpload<'a> {
    /// The name the sender gave (a path is cut to its last part).
    pub name: &'a str,
    /// The media type the sender gave; anything unusable becomes
    /// `application/octet-stream`.
    pub content_type: Option<&'a str>,
    /// The file.
    pub bytes: &'a [u8],
}

/// A stored file, for download.
pub struct StoredFile {
    /// The name it was sent with.
    pub name: String,
    /// Its media type, as checked when it was stored.
    pub content_type: String,
    /// Its size in bytes.
    pub size: u64,
    /// The file, piece by piece.
    pub content: ObjectStream,
}

/// The file name as kept: the last part of a path, without control characters,
/// trimmed, at most [`MAX_NAME_CHARS`]. `None` when nothing is left.
pub fn clean_name(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or(name);
    let clean: String = last.chars().filter(|c| !c.is_control()).take(MAX_NAME_CHARS).collect();
    let clean = clean.trim();
    (!clean.is_empty() && clean != "." && clean != "..").then(|| clean.to_string())
}

/// The name as one URL path segment: ASCII letters, digits, `.`, `-` and `_`,
/// every other character as `_`. It only labels the link (the token finds
/// the file), so it needs to be readable, not reversible.
pub fn link_segment(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A media type as `type/subtype` in lower case, parameters dropped; anything
/// else (missing, malformed, overlong) is `application/octet-stream`.
pub fn clean_content_type(value: Option<&str>) -> String {
    const FALLBACK: &str = "application/octet-stream";
    let Some(value) = value else {
        return FALLBACK.into();
    };
    let essence = value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    let token = |s: &str| {
        !s.is_empty()
            && s.len() <= 64
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    match essence.split_once('/') {
        Some((kind, sub)) if token(kind) && token(sub) => essence,
        _ => FALLBACK.into(),
    }
}

/// Whether a browser may show a file of this type in place. Everything else is
/// downloaded: an HTML or SVG file shown from Rapport's origin could run script.
pub fn shown_inline(content_type: &str) -> bool {
    matches!(content_type, "image/png" | "image/jpeg" | "image/gif" | "image/webp")
        || content_type.starts_with("audio/")
        || content_type.starts_with("video/")
}

impl Services {
    /// The file behind a download link's token; any unknown token is
    /// `NotFound`.
    pub async fn download_file(&self, token: &str) -> CoreResult<StoredFile> {
        type Row = (String, String, Option<Vec<u8>>, Option<String>);
        let row: Option<Row> = with_db!(self.db(), |pool| sqlx::query_as(
            "select name, content_type, data, blob_key from chat_files where id = $1"
        )
        .bind(token_digest(token))
        .fetch_optional(pool)
        .await)?;
        let (name, content_type, data, blob_key) = row.ok_or(CoreError::NotFound("file"))?;
        let (size, content) = match (data, blob_key) {
            (_, Some(key)) => self.media().stream(&key).await?,
            // Stored in the row before media moved to the store.
            (Some(data), None) => (
                data.len() as u64,
                futures_util::stream::once(async move { Ok(Bytes::from(data)) }).boxed(),
            ),
            (None, None) => return Err(CoreError::NotFound("file")),
        };
        Ok(StoredFile {
            name,
            content_type,
            size,
            content,
        })
    }

    /// Checks and stores a file; returns its link's token and its clean name.
    pub(crate) async fn store_file(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        upload: FileUpload<'_>,
    ) -> CoreResult<(String, String)> {
        let max_bytes = self.max_file_bytes();
        let mut checks = Checks::new();
        let name = clean_name(upload.name);
        if name.is_none() {
            checks.push("name", "required", "give the file's name (?name=)");
        }
        if max_bytes == 0 {
            checks.push("file", "files_off", "this server accepts no files");
        } else if upload.bytes.is_empty() {
            checks.push("file", "empty", "the file is empty");
        } else if upload.bytes.len() > max_bytes {
            checks.push(
                "file",
                "file_too_large",
                format!("files may have at most {max_bytes} bytes"),
            );
        }
        checks.finish()?;
        // The tenant's files together stay under its bound. Two uploads at
        // the same moment may each see room for themselves: the bound is
        // passed by at most a few files, never without limit.
        let stored: i64 = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select cast(coalesce(sum(size), 0) as bigint) from chat_files where tenant_id = $1"
        )
        .bind(tenant_id)
        .fetch_one(pool)
        .await)?;
        let allowed = self.tenant_limits(tenant_id).await?.file_bytes;
        if stored + upload.bytes.len() as i64 > allowed {
            return Err(CoreError::TooLarge {
                code: "file_storage_full",
                message: format!("this workspace keeps at most {allowed} bytes of files; delete old ones to make room"),
            });
        }
        let name = name.unwrap_or_default();
        let token = random_token(32);
        let now = now_ms();
        // The object first, then the row that names it (see `media_store`).
        let key = MediaStore::new_key(MediaKind::File, tenant_id, now);
        self.media().put(&key, Bytes::copy_from_slice(upload.bytes)).await?;
        let stored = with_db!(self.writer(), |pool| sqlx::query(
            "insert into chat_files (id, tenant_id, customer_id, name, content_type, size, blob_key, created_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8)"
        )
        .bind(token_digest(&token))
        .bind(tenant_id)
        .bind(customer_id)
        .bind(&name)
        .bind(clean_content_type(upload.content_type))
        .bind(upload.bytes.len() as i64)
        .bind(&key)
        .bind(now)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()));
        if let Err(e) = stored {
            self.forget_object(MediaKind::File, &key).await;
            return Err(e.into());
        }
        Ok((token, name))
    }

    /// The download link of a stored file.
    pub(crate) fn file_link(&self, token: &str, name: &str) -> String {
        let segment = clean_name(name)
            .map(|n| link_segment(&n))
            .unwrap_or_else(|| "file".into());
        format!("{}/files/{token}/{segment}", self.public_url())
    }

    /// Whether `url` is the download link of a file this customer uploaded
    /// (any name after the token: the token alone names the file).
    pub(crate) async fn is_own_file(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        url: &str,
    ) -> CoreResult<bool> {
        let prefix = format!("{}/files/", self.public_url());
        let Some(token) = url
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split('/').next())
            .filter(|t| !t.is_empty())
        else {
            return Ok(false);
        };
        let found: Option<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from chat_files where id = $1 and tenant_id = $2 and customer_id = $3"
        )
        .bind(token_digest(token))
        .bind(tenant_id)
        .bind(customer_id)
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// Passes on the message's outcome; when it failed, the file it was to
    /// carry is deleted (its object with it, by the media cleanup).
    pub(crate) async fn keep_file_if(&self, sent: CoreResult<Message>, token: &str) -> CoreResult<Message> {
        if sent.is_err() {
            let deleted = with_db!(self.writer(), |pool| sqlx::query(
                "delete from chat_files where id = $1"
            )
            .bind(token_digest(token))
            .execute(pool)
            .await
            .map(|r| r.rows_affected()));
            if let Err(e) = deleted {
                tracing::warn!(error = %e, "cannot delete the file of a message that failed");
            }
        }
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_lose_paths_and_control_characters() {
        assert_eq!(clean_name("C:\\Users\\me\\report.pdf").as_deref(), Some("report.pdf"));
        assert_eq!(clean_name("../../etc/passwd").as_deref(), Some("passwd"));
        assert_eq!(clean_name(" a\u{0}b\n.txt ").as_deref(), Some("ab.txt"));
        assert_eq!(clean_name("dir/"), None);
        assert_eq!(clean_name(".."), None);
        assert_eq!(clean_name(&"x".repeat(500)).map(|n| n.chars().count()), Some(200));
    }

    #[test]
    fn link_segments_are_plain_ascii() {
        assert_eq!(link_segment("Rechnung März 2026.pdf"), "Rechnung_M_rz_2026.pdf");
        assert_eq!(link_segment("a?b#c"), "a_b_c");
    }

    #[test]
    fn content_types_are_checked() {
        assert_eq!(clean_content_type(Some("Image/PNG; charset=x")), "image/png");
        assert_eq!(clean_content_type(Some("text/html")), "text/html");
        assert_eq!(clean_content_type(Some("nonsense")), "application/octet-stream");
        assert_eq!(clean_content_type(Some("a/b c")), "application/octet-stream");
        assert_eq!(clean_content_type(None), "application/octet-stream");
    }

    #[test]
    fn only_passive_types_show_inline() {
        assert!(shown_inline("image/png"));
        assert!(shown_inline("audio/ogg"));
        assert!(!shown_inline("text/html"));
        assert!(!shown_inline("text/plain"));
        assert!(!shown_inline("image/svg+xml"));
        assert!(!shown_inline("application/octet-stream"));
    }
}
