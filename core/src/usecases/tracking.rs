//! The visitor script reports what happened on a page (visits, recorded
//! sessions, slow resources, script errors), in one transaction per batch,
//! all or nothing: the facts are stored, and new script errors fire the
//! `JAVASCRIPT_ERROR` watchdogs once per batch.

use crate::{
    engine::watchdogs,
    error::CoreResult,
    ids::TenantId,
    reports::ingest::{self, TrackBatch, TrackResult},
    time::now_ms,
    Services,
};

impl Services {
    /// Records a batch from the visitor script, all or nothing.
    pub async fn track(&self, tenant_id: &TenantId, batch: TrackBatch) -> CoreResult<TrackResult> {
        ingest::validate(&batch, now_ms())?;
        let mut tx = self.db().begin().await?;
        let (result, new_errors) = ingest::store_batch(&mut tx, tenant_id, &batch).await?;
        if let Some(first) = new_errors.first() {
            let count = i64::try_from(new_errors.len()).unwrap_or(i64::MAX);
            watchdogs::script_errors(&mut tx, tenant_id, &first.message, &first.url, count).await?;
        }
        tx.commit().await?;
        Ok(result)
    }
}
