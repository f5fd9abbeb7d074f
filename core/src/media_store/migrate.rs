//! `rapport admin migrate-media`: moves the bytes that rows hold (written
//! before media moved to object storage) into the media store.
//!
//! Row by row: the object is stored, then the row is switched to it
//! (`blob_key` set, `data` cleared) in one statement that only changes a row
//! still holding its bytes. So the command can stop at any point and be run
//! again: what moved stays moved, and a row that was deleted (or moved by
//! another run) meanwhile gets its new object deleted again. Each kind is
//! walked once in key order, so a run reads every row once however large the
//! table is. Serving goes on meanwhile: a row is read from wherever it is.

use bytes::Bytes;
use serde::Serialize;

use super::{MediaKind, MediaStore};
use crate::{error::CoreResult, ids::TenantId, time::now_ms, with_db, Services};

/// Rows read per step.
const BATCH: i64 = 100;

/// What a run moved.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MigratedMedia {
    /// Chat files moved.
    pub files: u64,
    /// Session-recording batches moved.
    pub recording_batches: u64,
    /// Call-recording chunks moved.
    pub call_recording_chunks: u64,
    /// Bytes moved, in all.
    pub bytes: u64,
}

impl Services {
    /// Moves every row's bytes into the media store; returns what moved.
    pub async fn migrate_media(&self) -> CoreResult<MigratedMedia> {
        let mut moved = MigratedMedia::default();
        self.migrate_files(&mut moved).await?;
        self.migrate_recording_batches(&mut moved).await?;
        self.migrate_call_recording_chunks(&mut moved).await?;
        Ok(moved)
    }

    /// Stores `data` as a new object of `kind`, then runs `switch` (the
    /// row's update, binding the key); returns whether the row took it. A row
    /// that did not (deleted or moved meanwhile) has the object deleted again.
    async fn move_row<F, Fut>(&self, kind: MediaKind, tenant_id: &str, data: Vec<u8>, switch: F) -> CoreResult<bool>
    where
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future<Output = CoreResult<u64>>,
    {
        let key = MediaStore::new_key(kind, &TenantId::from(tenant_id), now_ms());
        self.media().put(&key, Bytes::from(data)).await?;
        match switch(key.clone()).await {
            Ok(1) => Ok(true),
            Ok(_) => {
                self.forget_object(kind, &key).await;
                Ok(false)
            }
            Err(e) => {
                self.forget_object(kind, &key).await;
                Err(e)
            }
        }
    }

    async fn migrate_files(&self, moved: &mut MigratedMedia) -> CoreResult<()> {
        let mut after = String::new();
        loop {
            let rows: Vec<(String, String, Vec<u8>)> = with_db!(self.db(), |pool| {
                sqlx::query_as(
                "select id, tenant_id, data from chat_files where blob_key is null and id > $1 order by id limit $2"
            )
            .bind(&after)
            .bind(BATCH)
            .fetch_all(pool)
            .await
            })?;
            let Some(last) = rows.last() else {
                return Ok(());
            };
            after = last.0.clone();
            for (id, tenant_id, data) in rows {
                let size = data.len() as u64;
                let switched = self
                    .move_row(MediaKind::File, &tenant_id, data, |key| async move {
                        Ok(with_db!(self.writer(), |pool| sqlx::query(
                            "update chat_files set blob_key = $2, data = null where id = $1 and blob_key is null"
                        )
                        .bind(&id)
                        .bind(&key)
                        .execute(pool)
                        .await
                        .map(|r| r.rows_affected()))?)
                    })
                    .await?;
                if switched {
                    moved.files += 1;
                    moved.bytes += size;
                }
            }
        }
    }

    async fn migrate_recording_batches(&self, moved: &mut MigratedMedia) -> CoreResult<()> {
        let mut after = (String::new(), String::new(), -1_i64);
        loop {
            let rows: Vec<(String, String, i64, Vec<u8>)> = with_db!(self.db(), |pool| sqlx::query_as(
                "select tenant_id, session_id, seq, data from recording_chunks \
                 where blob_key is null and (tenant_id, session_id, seq) > ($1, $2, $3) \
                 order by tenant_id, session_id, seq limit $4"
            )
            .bind(&after.0)
            .bind(&after.1)
            .bind(after.2)
            .bind(BATCH)
            .fetch_all(pool)
            .await)?;
            let Some(last) = rows.last() else {
                return Ok(());
            };
            after = (last.0.clone(), last.1.clone(), last.2);
            for (tenant_id, session_id, seq, data) in rows {
                let size = data.len() as u64;
                let tenant = tenant_id.clone();
                let switched = self
                    .move_row(MediaKind::Recording, &tenant, data, |key| async move {
                        Ok(with_db!(self.writer(), |pool| sqlx::query(
                            "update recording_chunks set blob_key = $4, data = null \
                             where tenant_id = $1 and session_id = $2 and seq = $3 and blob_key is null"
                        )
                        .bind(&tenant_id)
                        .bind(&session_id)
                        .bind(seq)
                        .bind(&key)
                        .execute(pool)
                        .await
                        .map(|r| r.rows_affected()))?)
                    })
                    .await?;
                if switched {
                    moved.recording_batches += 1;
                    moved.bytes += size;
                }
            }
        }
    }

    async fn migrate_call_recording_chunks(&self, moved: &mut MigratedMedia) -> CoreResult<()> {
        let mut after = (String::new(), -1_i64);
        loop {
            // Chunks are up to a MiB each: fewer per step.
            let rows: Vec<(String, i64, String, Vec<u8>)> = with_db!(self.db(), |pool| sqlx::query_as(
                "select c.recording_id, c.seq, r.tenant_id, c.data from conference_recording_chunks c \
                 join conference_recordings r on r.id = c.recording_id \
                 where c.blob_key is null and (c.recording_id, c.seq) > ($1, $2) \
                 order by c.recording_id, c.seq limit $3"
            )
            .bind(&after.0)
            .bind(after.1)
            .bind(BATCH / 10)
            .fetch_all(pool)
            .await)?;
            let Some(last) = rows.last() else {
                return Ok(());
            };
            after = (last.0.clone(), last.1);
            for (recording_id, seq, tenant_id, data) in rows {
                let size = data.len() as u64;
                let switched = self
                    .move_row(MediaKind::CallRecording, &tenant_id, data, |key| async move {
                        Ok(with_db!(self.writer(), |pool| sqlx::query(
                            "update conference_recording_chunks set blob_key = $3, data = null \
                             where recording_id = $1 and seq = $2 and blob_key is null"
                        )
                        .bind(&recording_id)
                        .bind(seq)
                        .bind(&key)
                        .execute(pool)
                        .await
                        .map(|r| r.rows_affected()))?)
                    })
                    .await?;
                if switched {
                    moved.call_recording_chunks += 1;
                    moved.bytes += size;
                }
            }
        }
    }
}
