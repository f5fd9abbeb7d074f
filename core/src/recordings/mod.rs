//! Session recording by the visitor script: the rrweb events of a visitor's
//! pages, for replay and for live view.
//!
//! - A workspace decides what is recorded ([`RecordingSettings`], `settings.rs`): recording on
//!   or off, whether the visitor's consent is needed, CSS selectors of text to
//!   mask and of elements to leave out (every input is masked anyway), and how
//!   long recordings are kept.
//! - The script starts a session ([`Services::start_recording`]): a recorded
//!   session (spec 2.14) with a write token only the script holds. It appends
//!   batches of events ([`Services::append_recording`]), each stored once per
//!   `seq`, gzip-compressed, append-only. Every instance on one PostgreSQL reads
//!   them, so a replay or live view works through any instance.
//! - A live viewer marks the session watched ([`Services::watch_recording`],
//!   `watching.rs`);
//!   the script hears it (on its control stream, or in the reply to a batch),
//!   takes a full snapshot and sends every 100 ms. Each batch stored while the
//!   session is watched is announced on the live bus, across instances, so
//!   viewers read it at once.
//! - A session quiet for [`SESSION_IDLE_MS`] ends ([`ends`]): it is closed,
//!   its reason decided and counted in the session reports.

mod batches;
pub mod ends;
mod replay;
mod settings;
mod watching;

use batches::{check_batch, BatchFacts, StoredChunk};
pub use batches::{gunzip, gzip, RecordedEvent, RecordingAck, RecordingBatch, RecordingStart, RecordingStarted};
pub use replay::Replay;
pub use settings::{RecordingSettings, RecordingSettingsIn};

use bytes::Bytes;

/// Recorded sessions, as this module reads them.
const SESSIONS: TenantTable = TenantTable::new("recorded_sessions", "session");

use crate::{
    audit::{self, Actor},
    crypto::{random_token, token_digest},
    db::TenantTable,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    limits::Meter,
    live::LiveEvent,
    media_store::{MediaKind, MediaStore},
    sessions::{RecordedSession, RecordedSessionIn},
    time::now_ms,
    validate::Checks,
    with_db, with_tx, Services,
};

/// How long a live viewer keeps a session watched without renewing.
pub const WATCH_MS: i64 = 30_000;
/// A recorded session ends after this long without a batch (30 minutes, as
/// web analytics count sessions): it is closed, takes no more batches (the
/// script then starts a new session), and is counted by reason.
pub const SESSION_IDLE_MS: i64 = 30 * 60_000;
/// Largest batch of events, as JSON, after decompression.
pub const MAX_BATCH_BYTES: usize = 8 * 1024 * 1024;
type SettingsRow = (bool, bool, Option<String>, Option<String>, i64, i64);

impl Services {
    /// Starts a recorded session for the visitor script of `widget_key`. With a
    /// visitor token, the session belongs to that visitor's customer, so agents
    /// find it from the conversation. Refused (403) when the workspace does not
    /// record.
    pub async fn start_recording(
        &self,
        widget_key: &str,
        visitor_token: Option<&str>,
        input: RecordingStart,
        actor: &Actor,
    ) -> CoreResult<(TenantId, RecordingStarted)> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        let customer_id = match visitor_token {
            Some(token) => Some(self.visitor(widget_key, token).await?.1.id),
            None => None,
        };
        if !self.recording_settings(&tenant_id).await?.enabled {
            return Err(CoreError::Forbidden);
        }
        let session_id = uuid::Uuid::now_v7().to_string();
        self.record_session(
            &tenant_id,
            RecordedSessionIn {
                id: Some(session_id.clone()),
                visitor_id: input.visitor_id,
                external_id: input.external_id,
                entry_url: input.url,
                page_count: Some(0),
                started_at: Some(chrono::Utc::now()),
                ended_at: None,
                tags: input.tags,
            },
            actor,
        )
        .await
        .map_err(|e| match e {
            // The script says `url`, not `entryUrl`.
            CoreError::Validation(fields) => CoreError::Validation(
                fields
                    .into_iter()
                    .map(|mut f| {
                        if f.field == "entryUrl" {
                            f.field = "url".into();
                        }
                        f
                    })
                    .collect(),
            ),
            other => other,
        })?;
        let write_token = format!("rw_{}", random_token(32));
        with_db!(self.writer(), |pool| sqlx::query(
            "update recorded_sessions set write_token_hash = $3, customer_id = $4 where tenant_id = $1 and id = $2"
        )
        .bind(&tenant_id)
        .bind(&session_id)
        .bind(token_digest(&write_token))
        .bind(&customer_id)
        .execute(pool)
        .await
        .map(|r| r.rows_affected()))?;
        Ok((
            tenant_id,
            RecordingStarted {
                session_id,
                write_token,
                watched: false,
            },
        ))
    }

    /// The tenant of a recording the script may append to: the widget key's
    /// tenant, the session, and its write token must agree, and the session
    /// must not have ended (else unauthenticated).
    pub async fn recording_writer(
        &self,
        widget_key: &str,
        session_id: &str,
        write_token: &str,
    ) -> CoreResult<TenantId> {
        let tenant_id = self.tenant_by_widget_key(widget_key).await?;
        let found: Option<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from recorded_sessions where tenant_id = $1 and id = $2 and write_token_hash = $3 \
             and closed_at is null"
        )
        .bind(&tenant_id)
        .bind(session_id)
        .bind(token_digest(write_token))
        .fetch_optional(pool)
        .await)?;
        found.map(|_| tenant_id).ok_or(CoreError::Unauthenticated)
    }

    /// Stores a batch of the script's events (once per `seq`) in a session the
    /// caller checked with [`Services::recording_writer`], moves the session's
    /// end and page count on, and tells live viewers.
    ///
    /// The batch's object is stored first and its row committed after (see
    /// [`crate::media_store`]); a batch the row does not take (a retry, a
    /// session that ended or is full) has its object deleted again.
    pub async fn append_recording(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        batch: RecordingBatch,
    ) -> CoreResult<RecordingAck> {
        let mut checks = Checks::new();
        let facts = check_batch(&mut checks, &batch);
        checks.finish()?;
        // A retry of a stored batch changes nothing and stores nothing.
        if self.recording_has_batch(tenant_id, session_id, batch.seq).await? {
            return Ok(RecordingAck {
                watched: self.recording_watched(tenant_id, session_id).await?,
            });
        }
        let json = serde_json::to_vec(&batch.events).map_err(|e| CoreError::Internal(e.to_string()))?;
        let data = gzip(&json)?;
        let chunk = StoredChunk {
            event_bytes: json.len() as i64,
            stored_bytes: data.len() as i64,
            key: MediaStore::new_key(MediaKind::Recording, tenant_id, now_ms()),
        };
        drop(json);
        self.media().put(&chunk.key, Bytes::from(data)).await?;
        match self
            .append_chunk_row(tenant_id, session_id, &batch, &facts, &chunk)
            .await
        {
            Ok(Some(ack)) => Ok(ack),
            Ok(None) => {
                // Another request stored this `seq` meanwhile.
                self.forget_object(MediaKind::Recording, &chunk.key).await;
                Ok(RecordingAck {
                    watched: self.recording_watched(tenant_id, session_id).await?,
                })
            }
            Err(e) => {
                self.forget_object(MediaKind::Recording, &chunk.key).await;
                Err(e)
            }
        }
    }

    /// Whether the session has batch `seq` already.
    async fn recording_has_batch(&self, tenant_id: &TenantId, session_id: &str, seq: i64) -> CoreResult<bool> {
        let found: Option<i64> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select seq from recording_chunks where tenant_id = $1 and session_id = $2 and seq = $3"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(seq)
        .fetch_optional(pool)
        .await)?;
        Ok(found.is_some())
    }

    /// The transaction of [`Services::append_recording`]: the batch's row and
    /// the session's counters; `None` when the row exists already.
    async fn append_chunk_row(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        batch: &RecordingBatch,
        facts: &BatchFacts,
        chunk: &StoredChunk,
    ) -> CoreResult<Option<RecordingAck>> {
        let limits = self.tenant_limits(tenant_id).await?;
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        let stored = with_tx!(&mut tx, |conn| sqlx::query(
            "insert into recording_chunks (tenant_id, session_id, seq, first_at, last_at, event_count, blob_key) \
             values ($1, $2, $3, $4, $5, $6, $7) on conflict (tenant_id, session_id, seq) do nothing"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(batch.seq)
        .bind(facts.first_at)
        .bind(facts.last_at)
        .bind(batch.events.len() as i64)
        .bind(&chunk.key)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if stored == 0 {
            tx.commit().await?;
            return Ok(None);
        }
        let event_bytes = chunk.event_bytes;
        // A session that ended since its writer was checked takes nothing more:
        // the script starts a new one. Nor does a full one: the script stops
        // recording it. Either way the chunk above is rolled back.
        let moved_on = with_tx!(&mut tx, |conn| {
            sqlx::query(
            "update recorded_sessions set ended_at = case when ended_at is null or ended_at < $3 then $3 else ended_at end, \
             page_count = page_count + $4, recorded_bytes = recorded_bytes + $5, updated_at = $6, last_batch_at = $6, \
             event_bytes = event_bytes + $7 \
             where tenant_id = $1 and id = $2 and closed_at is null and event_bytes + $7 <= $8"
        )
        .bind(tenant_id)
        .bind(session_id)
        .bind(facts.last_at)
        .bind(facts.pages)
        .bind(chunk.stored_bytes)
        .bind(now)
        .bind(event_bytes)
        .bind(limits.recording_session_bytes)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        if moved_on == 0 {
            let open: Option<bool> = with_tx!(&mut tx, |conn| sqlx::query_scalar(
                "select closed_at is null from recorded_sessions where tenant_id = $1 and id = $2"
            )
            .bind(tenant_id)
            .bind(session_id)
            .fetch_optional(conn)
            .await)?;
            return Err(match open {
                Some(true) => CoreError::TooLarge {
                    code: "recording_session_full",
                    message: format!(
                        "a recorded session keeps at most {} bytes of events; this one is full",
                        limits.recording_session_bytes
                    ),
                },
                _ => CoreError::Unauthenticated,
            });
        }
        let day_limit = limits.recording_day_bytes;
        crate::limits::spend(&mut tx, tenant_id, Meter::RecordingBytes, event_bytes, day_limit, now).await?;
        if let Some(tags) = &batch.tags {
            crate::sessions::replace_tags(&mut tx, tenant_id, session_id, tags).await?;
        }
        if let Some(token) = batch.visitor_token.as_deref() {
            with_tx!(&mut tx, |conn| sqlx::query(
                "update recorded_sessions set customer_id = (select customer_id from visitor_tokens \
                 where tenant_id = $1 and token_hash = $3) \
                 where tenant_id = $1 and id = $2 and customer_id is null"
            )
            .bind(tenant_id)
            .bind(session_id)
            .bind(token_digest(token))
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        // Only a watched session's batches are announced: most are never
        // watched, and every live screen of every instance would hear them.
        let (watched_until,): (Option<i64>,) = SESSIONS
            .read_in(&mut tx, tenant_id, session_id, "watched_until")
            .await?;
        let watched = watched_until.is_some_and(|until| until > now);
        if watched {
            let event = LiveEvent::RecordingChunk {
                session_id: session_id.to_string(),
                seq: batch.seq,
            };
            self.commit_live(tx, tenant_id, &CustomerId::default(), event).await?;
        } else {
            tx.commit().await?;
        }
        Ok(Some(RecordingAck { watched }))
    }

    /// The number of the session's latest stored batch, if any.
    pub async fn recording_last_seq(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<Option<i64>> {
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(
            "select max(seq) from recording_chunks where tenant_id = $1 and session_id = $2"
        )
        .bind(tenant_id)
        .bind(session_id)
        .fetch_one(pool)
        .await)?)
    }

    /// The latest recorded session of a customer (the chat visitor), if any.
    pub async fn latest_recording_of_customer(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
    ) -> CoreResult<Option<RecordedSession>> {
        let id: Option<String> = with_db!(self.db(), |pool| sqlx::query_scalar(
            "select id from recorded_sessions where tenant_id = $1 and customer_id = $2 \
             order by started_at desc, id desc limit 1"
        )
        .bind(tenant_id)
        .bind(customer_id)
        .fetch_optional(pool)
        .await)?;
        match id {
            Some(id) => Ok(Some(self.get_recorded_session(tenant_id, &id).await?)),
            None => Ok(None),
        }
    }

    /// Deletes up to `batch` recorded sessions (with their events and tags)
    /// whose last event is older than their workspace's recording retention.
    pub async fn prune_recordings(&self, now: i64, batch: i64) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        let deleted = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from recorded_sessions where (tenant_id, id) in (select s.tenant_id, s.id \
             from recorded_sessions s join tenants t on t.id = s.tenant_id \
             where coalesce(s.ended_at, s.started_at) < $1 - t.recording_retention_days * 86400000 limit $2)"
        )
        .bind(now)
        .bind(batch)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        Ok(deleted)
    }
}

#[cfg(test)]
mod tests;
