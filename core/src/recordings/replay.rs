//! A recorded session's replay: every stored batch of its events, in order,
//! as one JSON array, read a page of batches at a time so that the server's
//! memory does not grow with the session (`GET /rest/v1/session/{id}/events`
//! and the dashboard's player stream it), and the same reading in steps for
//! live viewers.

use std::collections::VecDeque;

use futures_util::{StreamExt, TryStreamExt};

use super::{gunzip, MAX_BATCH_BYTES};
use crate::{
    error::{CoreError, CoreResult},
    ids::TenantId,
    media_store::RowMedia,
    with_db, Services,
};

/// Inflates one stored batch: the JSON array of its events.
fn inflate(data: &[u8]) -> CoreResult<Vec<u8>> {
    gunzip(data, MAX_BATCH_BYTES).map_err(|e| CoreError::Internal(format!("reading a recording: {e}")))
}

/// Stored batches a replay reads per query: few enough that a page in memory
/// is small (they are compressed; one is inflated at a time), many enough that
/// a long session is not one query per batch.
const REPLAY_PAGE: i64 = 16;

/// A session's events on their way out as one JSON array
/// ([`Services::recording_replay`]). It holds one page of compressed batches
/// and one inflated batch at a time, however long the session.
pub struct Replay {
    services: Services,
    tenant_id: TenantId,
    session_id: String,
    /// The last batch read from the database.
    after: Option<i64>,
    page: VecDeque<(i64, Vec<u8>)>,
    stage: ReplayStage,
}

enum ReplayStage {
    /// Nothing sent yet: next comes `[`.
    Opening,
    /// Inside the array; whether an event was sent (the next needs a comma).
    Events { sent_any: bool },
    /// `]` was sent (or reading failed): nothing more.
    Done,
}

impl Replay {
    /// The next piece of the JSON array, or `None` once it is whole. After an
    /// error the array stays unfinished, which a reader sees as damaged.
    pub async fn next_piece(&mut self) -> CoreResult<Option<Vec<u8>>> {
        loop {
            match self.stage {
                ReplayStage::Done => return Ok(None),
                ReplayStage::Opening => {
                    self.stage = ReplayStage::Events { sent_any: false };
                    return Ok(Some(b"[".to_vec()));
                }
                ReplayStage::Events { sent_any } => {
                    if self.page.is_empty() {
                        let page = self
                            .services
                            .stored_batches(&self.tenant_id, &self.session_id, self.after, REPLAY_PAGE)
                            .await;
                        match page {
                            Ok(page) if page.is_empty() => {
                                self.stage = ReplayStage::Done;
                                return Ok(Some(b"]".to_vec()));
                            }
                            Ok(page) => {
                                self.after = page.last().map(|(seq, _)| *seq);
                                self.page = page.into();
                            }
                            Err(e) => {
                                self.stage = ReplayStage::Done;
                                return Err(e);
                            }
                        }
                    }
                    let Some((_, data)) = self.page.pop_front() else {
                        continue;
                    };
                    let json = inflate(&data).inspect_err(|_| self.stage = ReplayStage::Done)?;
                    // Each batch is a JSON array: its inside joins the others'.
                    let inner = json.get(1..json.len().saturating_sub(1)).unwrap_or_default();
                    if inner.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    let mut piece = Vec::with_capacity(inner.len() + 1);
                    if sent_any {
                        piece.push(b',');
                    }
                    piece.extend_from_slice(inner);
                    self.stage = ReplayStage::Events { sent_any: true };
                    return Ok(Some(piece));
                }
            }
        }
    }
}

impl Services {
    /// The session's stored batches after `after` (all from the start with
    /// `None`), in order, each as the JSON array of its events: at most
    /// `limit` of them, so a caller far behind reads in steps.
    pub async fn recording_batches(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        after: Option<i64>,
        limit: i64,
    ) -> CoreResult<Vec<(i64, Vec<u8>)>> {
        self.stored_batches(tenant_id, session_id, after, limit)
            .await?
            .into_iter()
            .map(|(seq, data)| inflate(&data).map(|json| (seq, json)))
            .collect()
    }

    /// Up to `limit` stored batches after `after`, in order, compressed.
    /// Their objects are read a few at a time, in order.
    async fn stored_batches(
        &self,
        tenant_id: &TenantId,
        session_id: &str,
        after: Option<i64>,
        limit: i64,
    ) -> CoreResult<Vec<(i64, Vec<u8>)>> {
        /// Objects read at once: a page from S3 costs a few round trips, not one per batch.
        const READS_AT_ONCE: usize = 8;
        let rows: Vec<(i64, Option<Vec<u8>>, Option<String>)> = with_db!(self.db(), |pool| {
            sqlx::query_as(
                "select seq, data, blob_key from recording_chunks where tenant_id = $1 and session_id = $2 \
                 and seq > $3 order by seq limit $4",
            )
            .bind(tenant_id)
            .bind(session_id)
            .bind(after.unwrap_or(-1))
            .bind(limit)
            .fetch_all(pool)
            .await
        })?;
        futures_util::stream::iter(rows)
            .map(|(seq, data, blob_key)| async move {
                let bytes = RowMedia::from_columns(data, blob_key)?.read(self.media()).await?;
                Ok((seq, bytes))
            })
            .buffered(READS_AT_ONCE)
            .try_collect()
            .await
    }

    /// Every recorded event of a session, in order, as one JSON array, read
    /// piece by piece ([`Replay::next_piece`]) so that a replay's memory does
    /// not grow with the session. 404 for a session of another tenant.
    pub async fn recording_replay(&self, tenant_id: &TenantId, session_id: &str) -> CoreResult<Replay> {
        self.get_recorded_session(tenant_id, session_id).await?;
        Ok(Replay {
            services: self.clone(),
            tenant_id: tenant_id.clone(),
            session_id: session_id.to_string(),
            after: None,
            page: VecDeque::new(),
            stage: ReplayStage::Opening,
        })
    }
}
