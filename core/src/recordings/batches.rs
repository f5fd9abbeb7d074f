//! A recording batch from the visitor script: its wire shape, the checks it
//! passes, what it says about its session, and its gzip as stored.

use std::io::{Read, Write};

use flate2::{read::GzDecoder, write::GzEncoder, Compression};
use serde::{Deserialize, Serialize};

use crate::{
    error::{CoreError, CoreResult},
    time::now_ms,
    validate::Checks,
};

/// Most events in one batch.
const MAX_BATCH_EVENTS: usize = 20_000;
/// rrweb's `Meta` event (a page's URL and size): one per page the session saw.
const RRWEB_META: i64 = 4;

/// The visitor script starts recording a session.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingStart {
    /// The script's anonymous visitor id (1–200 characters; required).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub visitor_id: Option<String>,
    /// The page the session starts on (an http(s) URL).
    #[schema(format = "uri", max_length = 2048)]
    pub url: Option<String>,
    /// The id set with `Rapport.identify` (at most 200 characters).
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// Tags set with `Rapport.tag`: unique (422 `duplicate`), at most 50, each
    /// 1–64 characters.
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
}

/// A started recording: where to append, and the token that may.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingStarted {
    /// The recorded session's id.
    pub session_id: String,
    /// Bearer token for appending to this session (shown once).
    pub write_token: String,
    /// Whether a live viewer watches the session now.
    pub watched: bool,
}

/// A batch of recorded events.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingBatch {
    /// The batch's number in its session, from 0 (0–1,000,000,000). A batch sent
    /// again with the same number is stored once.
    #[schema(minimum = 0, maximum = 1_000_000_000)]
    pub seq: i64,
    /// rrweb events, in order (at most 20,000).
    #[schema(value_type = Vec<RecordedEvent>, max_items = 20000)]
    pub events: Vec<serde_json::Value>,
    /// The visitor's tags now, when they changed (they replace the session's):
    /// unique (422 `duplicate`), at most 50, each 1–64 characters.
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
    /// The visitor's token (`vt_…`), once the visitor chats: the session then
    /// belongs to its customer, and agents open it from the conversation. An
    /// unknown token is ignored.
    #[schema(max_length = 200)]
    pub visitor_token: Option<String>,
}

/// One rrweb event, as the recorder made it; its other fields (`data`, …) are
/// kept as they are. Documents the shape [`RecordingBatch::events`] needs.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RecordedEvent {
    /// rrweb's event type: 0 DOM loaded, 1 load, 2 full snapshot, 3 incremental
    /// snapshot, 4 meta (a page), 5 custom, 6 plugin.
    #[serde(rename = "type")]
    #[schema(minimum = 0, maximum = 6)]
    pub kind: i64,
    /// When it happened, unix ms.
    #[schema(minimum = 0)]
    pub timestamp: i64,
}

/// What the script learns from a stored batch.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecordingAck {
    /// Whether a live viewer watches the session now: then the script takes a
    /// full snapshot and sends every 100 ms.
    pub watched: bool,
}

/// A batch as stored: its object's key and its sizes.
pub(super) struct StoredChunk {
    /// Bytes of its events' JSON (what the limits count).
    pub(super) event_bytes: i64,
    /// Bytes of its gzip (what the session's `recordedBytes` counts).
    pub(super) stored_bytes: i64,
    pub(super) key: String,
}

/// What one batch says about its session.
pub(super) struct BatchFacts {
    pub(super) first_at: i64,
    pub(super) last_at: i64,
    pub(super) pages: i64,
}

pub(super) fn check_batch(checks: &mut Checks, batch: &RecordingBatch) -> BatchFacts {
    checks.in_range("seq", batch.seq, 0..=1_000_000_000);
    if batch.events.len() > MAX_BATCH_EVENTS {
        checks.push(
            "events",
            "too_many",
            format!("at most {MAX_BATCH_EVENTS} events per batch"),
        );
    }
    if let Some(tags) = &batch.tags {
        checks.tags("tags", tags, 50);
    }
    // As documented: a token that long is no token of ours either way.
    checks.optional_text("visitorToken", batch.visitor_token.as_deref(), 200);
    let mut facts = BatchFacts {
        first_at: i64::MAX,
        last_at: 0,
        pages: 0,
    };
    for (i, event) in batch.events.iter().enumerate() {
        let kind = event.get("type").and_then(serde_json::Value::as_i64);
        let at = event.get("timestamp").and_then(serde_json::Value::as_i64);
        match (kind, at) {
            (Some(kind @ 0..=6), Some(at)) if at >= 0 => {
                facts.first_at = facts.first_at.min(at);
                facts.last_at = facts.last_at.max(at);
                facts.pages += i64::from(kind == RRWEB_META);
            }
            _ => {
                checks.push(
                    &format!("events[{i}]"),
                    "invalid_event",
                    "an event needs a type (0–6) and a timestamp (unix ms)",
                );
                // One bad event names the batch; the rest need not be read.
                break;
            }
        }
    }
    if facts.first_at == i64::MAX {
        facts.first_at = now_ms();
        facts.last_at = facts.first_at;
    }
    facts
}

/// Compresses `bytes` with gzip (fast: batches are many and small).
pub fn gzip(bytes: &[u8]) -> CoreResult<Vec<u8>> {
    let mut encoder = GzEncoder::new(Vec::with_capacity(bytes.len() / 4), Compression::fast());
    encoder
        .write_all(bytes)
        .and_then(|_| encoder.finish())
        .map_err(|e| CoreError::Internal(format!("compressing a recording: {e}")))
}

/// Decompresses gzip `bytes`, refusing more than `limit` bytes of output (an
/// error of kind `FileTooLarge`; damaged gzip is any other kind).
pub fn gunzip(bytes: &[u8], limit: usize) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    GzDecoder::new(bytes).take(limit as u64 + 1).read_to_end(&mut out)?;
    if out.len() > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::FileTooLarge,
            "too large once decompressed",
        ));
    }
    Ok(out)
}
