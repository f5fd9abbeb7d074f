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
use sqlx::Row;

use super::{MediaKind, MediaStore};
use crate::{error::CoreResult, ids::TenantId, time::now_ms, with_db, Services};

/// The type of one column of a row's key.
#[derive(Debug, Clone, Copy)]
enum Column {
    Text,
    Int,
}

/// One part of a row's key, as read.
#[derive(Debug, Clone)]
enum KeyPart {
    Text(String),
    Int(i64),
}

impl Column {
    /// A value before every stored one: where the walk starts.
    fn before_all(self) -> KeyPart {
        match self {
            Column::Text => KeyPart::Text(String::new()),
            // Sequence numbers start at 0.
            Column::Int => KeyPart::Int(-1),
        }
    }
}

/// A table whose rows may still hold their bytes.
struct Table {
    /// The media its rows hold.
    kind: MediaKind,
    /// Its key's columns.
    key: &'static [Column],
    /// The rows still holding bytes after a key, in key order: the key's
    /// columns, the tenant, the bytes. Binds the key's parts, then how many.
    select: &'static str,
    /// Switches one row to its object, only if it still holds its bytes.
    /// Binds the key's parts, then the object's key.
    switch: &'static str,
    /// Rows read per step.
    batch: i64,
}

/// The tables that held media before it moved, and how to walk each.
const TABLES: [Table; 3] = [
    Table {
        kind: MediaKind::File,
        key: &[Column::Text],
        select: "select id, tenant_id, data from chat_files where blob_key is null and id > $1 order by id limit $2",
        switch: "update chat_files set blob_key = $2, data = null where id = $1 and blob_key is null",
        batch: 100,
    },
    Table {
        kind: MediaKind::Recording,
        key: &[Column::Text, Column::Text, Column::Int],
        select: "select tenant_id, session_id, seq, tenant_id, data from recording_chunks \
             where blob_key is null and (tenant_id, session_id, seq) > ($1, $2, $3) \
             order by tenant_id, session_id, seq limit $4",
        switch: "update recording_chunks set blob_key = $4, data = null \
             where tenant_id = $1 and session_id = $2 and seq = $3 and blob_key is null",
        batch: 100,
    },
    Table {
        kind: MediaKind::CallRecording,
        key: &[Column::Text, Column::Int],
        select: "select c.recording_id, c.seq, r.tenant_id, c.data from conference_recording_chunks c \
             join conference_recordings r on r.id = c.recording_id \
             where c.blob_key is null and (c.recording_id, c.seq) > ($1, $2) \
             order by c.recording_id, c.seq limit $3",
        switch: "update conference_recording_chunks set blob_key = $3, data = null \
             where recording_id = $1 and seq = $2 and blob_key is null",
        // Chunks are up to a MiB each: fewer per step.
        batch: 10,
    },
];

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

impl MigratedMedia {
    /// The count of rows of `kind` moved.
    fn rows(&mut self, kind: MediaKind) -> &mut u64 {
        match kind {
            MediaKind::File => &mut self.files,
            MediaKind::Recording => &mut self.recording_batches,
            MediaKind::CallRecording => &mut self.call_recording_chunks,
        }
    }
}

impl Services {
    /// Moves every row's bytes into the media store; returns what moved.
    pub async fn migrate_media(&self) -> CoreResult<MigratedMedia> {
        let mut moved = MigratedMedia::default();
        for table in &TABLES {
            self.migrate_table(table, &mut moved).await?;
        }
        Ok(moved)
    }

    /// Walks `table` once in key order, a step at a time, moving each row.
    async fn migrate_table(&self, table: &Table, moved: &mut MigratedMedia) -> CoreResult<()> {
        let mut after: Vec<KeyPart> = table.key.iter().map(|c| c.before_all()).collect();
        loop {
            let rows: Vec<(Vec<KeyPart>, TenantId, Vec<u8>)> = with_db!(self.db(), |pool| {
                let mut q = sqlx::query(table.select);
                for part in &after {
                    q = match part {
                        KeyPart::Text(text) => q.bind(text),
                        KeyPart::Int(n) => q.bind(*n),
                    };
                }
                q.bind(table.batch).fetch_all(pool).await.and_then(|rows| {
                    rows.iter()
                        .map(|row| {
                            let mut key = Vec::with_capacity(table.key.len());
                            for (i, column) in table.key.iter().enumerate() {
                                key.push(match column {
                                    Column::Text => KeyPart::Text(row.try_get(i)?),
                                    Column::Int => KeyPart::Int(row.try_get(i)?),
                                });
                            }
                            let n = table.key.len();
                            Ok((key, row.try_get(n)?, row.try_get(n + 1)?))
                        })
                        .collect::<Result<Vec<_>, sqlx::Error>>()
                })
            })?;
            let Some(last) = rows.last() else {
                return Ok(());
            };
            after = last.0.clone();
            for (key, tenant_id, data) in rows {
                let size = data.len() as u64;
                let switched = self
                    .move_row(table.kind, &tenant_id, data, |object| async move {
                        Ok(with_db!(self.writer(), |pool| {
                            let mut q = sqlx::query(table.switch);
                            for part in &key {
                                q = match part {
                                    KeyPart::Text(text) => q.bind(text),
                                    KeyPart::Int(n) => q.bind(*n),
                                };
                            }
                            q.bind(&object).execute(pool).await.map(|r| r.rows_affected())
                        })?)
                    })
                    .await?;
                if switched {
                    *moved.rows(table.kind) += 1;
                    moved.bytes += size;
                }
            }
        }
    }

    /// Stores `data` as a new object of `kind`, then runs `switch` (the
    /// row's update, binding the key); returns whether the row took it. A row
    /// that did not (deleted or moved meanwhile) has the object deleted again.
    async fn move_row<F, Fut>(
        &self,
        kind: MediaKind,
        tenant_id: &TenantId,
        data: Vec<u8>,
        switch: F,
    ) -> CoreResult<bool>
    where
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future<Output = CoreResult<u64>>,
    {
        let key = MediaStore::new_key(kind, tenant_id, now_ms());
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
}
