//! Recordings of appointment conferences.
//!
//! The instance that holds a call muxes each participant's camera and
//! microphone (and, apart, a shared screen) into a WebM file while the
//! appointment's `record` switch is on. When that participant leaves, or the
//! switch goes off, the finished file is stored here, in chunks of
//! [`CHUNK_BYTES`] (one object in the media store and one short write
//! each), and then listed, audited and
//! counted in the conference report in one transaction: a recording is listed
//! only once all of it is stored, and every instance serves it.
//!
//! Recordings go with their appointment or tenant, and otherwise once older
//! than the workspace's `conferenceRetentionDays` (retention, hourly).

use bytes::Bytes;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    error::{CoreError, CoreResult},
    ids::{AppointmentId, TenantId},
    media_store::{MediaKind, MediaStore, RowMedia},
    time::{from_ms, now_ms},
    with_db, with_tx, Services,
};

/// Bytes of one stored chunk: large enough that a long call is a few hundred
/// rows, small enough that a download holds one chunk in memory at a time.
pub const CHUNK_BYTES: usize = 1 << 20;

/// What a recording shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RecordingSource {
    /// A participant's camera, with their microphone.
    Camera,
    /// A participant's shared screen.
    Screen,
}

impl RecordingSource {
    /// The stored value.
    pub fn as_str(self) -> &'static str {
        match self {
            RecordingSource::Camera => "CAMERA",
            RecordingSource::Screen => "SCREEN",
        }
    }

    fn parse(value: &str) -> Self {
        if value == "SCREEN" {
            RecordingSource::Screen
        } else {
            RecordingSource::Camera
        }
    }
}

/// One stored recording (a WebM file) of an appointment's conference.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConferenceRecording {
    /// Id.
    pub id: String,
    /// The appointment whose call it recorded.
    #[schema(value_type = String)]
    pub appointment_id: AppointmentId,
    /// The participant's name, as they gave it when joining.
    pub participant: String,
    /// What it shows.
    pub source: RecordingSource,
    /// When its first frame arrived.
    pub started_at: DateTime<Utc>,
    /// When its last frame arrived.
    pub ended_at: DateTime<Utc>,
    /// `endedAt - startedAt`, in whole seconds.
    pub duration_seconds: i64,
    /// Size of the WebM file, in bytes.
    pub size: i64,
}

/// A finished recording, before it is stored.
#[derive(Debug, Clone)]
pub struct NewConferenceRecording {
    /// The appointment.
    pub appointment_id: AppointmentId,
    /// The participant's name.
    pub participant: String,
    /// Camera or screen.
    pub source: RecordingSource,
    /// First frame, unix ms.
    pub started_at: i64,
    /// Last frame, unix ms.
    pub ended_at: i64,
    /// The host who joined first (the conference report's agent).
    pub host: Option<String>,
}

#[derive(sqlx::FromRow)]
struct RecordingRow {
    id: String,
    appointment_id: AppointmentId,
    participant: String,
    source: String,
    started_at: i64,
    ended_at: i64,
    size: i64,
}

impl From<RecordingRow> for ConferenceRecording {
    fn from(r: RecordingRow) -> Self {
        ConferenceRecording {
            id: r.id,
            appointment_id: r.appointment_id,
            participant: r.participant,
            source: RecordingSource::parse(&r.source),
            started_at: from_ms(r.started_at),
            ended_at: from_ms(r.ended_at),
            duration_seconds: (r.ended_at - r.started_at).max(0) / 1000,
            size: r.size,
        }
    }
}

const COLUMNS: &str = "id, appointment_id, participant, source, started_at, ended_at, size";

impl Services {
    /// Stores a finished recording read from `file`: its chunks one short
    /// transaction at a time (a long recording never holds the writer), then,
    /// in one transaction, its listing, its audit entry
    /// (`conference.recording`) and its facts for the conference report.
    /// Returns it as listed. A recording that fails half-way is deleted again.
    pub async fn store_conference_recording<R>(
        &self,
        tenant_id: &TenantId,
        recording: &NewConferenceRecording,
        file: R,
    ) -> CoreResult<ConferenceRecording>
    where
        R: tokio::io::AsyncRead + Unpin,
    {
        let id = uuid::Uuid::now_v7().to_string();
        // Unlisted (no `stored_at`) until every chunk is in. Each write is a
        // short transaction of its own (on SQLite, writes go through the one
        // writer connection, which transactions take).
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into conference_recordings (id, tenant_id, appointment_id, participant, source, \
             started_at, ended_at, size, created_at) values ($1, $2, $3, $4, $5, $6, $7, 0, $8)"
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(&recording.appointment_id)
        .bind(&recording.participant)
        .bind(recording.source.as_str())
        .bind(recording.started_at)
        .bind(recording.ended_at)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        tx.commit().await?;
        let stored = self.store_chunks_and_list(tenant_id, recording, &id, file).await;
        if stored.is_err() {
            if let Ok(mut tx) = self.db().begin().await {
                let deleted = with_tx!(&mut tx, |conn| sqlx::query(
                    "delete from conference_recordings where id = $1"
                )
                .bind(&id)
                .execute(conn)
                .await
                .map(|r| r.rows_affected()));
                if deleted.is_ok() {
                    let _ = tx.commit().await;
                }
            }
        }
        stored?;
        self.conference_recording(tenant_id, &recording.appointment_id, &id)
            .await
    }

    async fn store_chunks_and_list<R>(
        &self,
        tenant_id: &TenantId,
        recording: &NewConferenceRecording,
        id: &str,
        mut file: R,
    ) -> CoreResult<()>
    where
        R: tokio::io::AsyncRead + Unpin,
    {
        use crate::reports::{
            catalogue::CONFERENCE_RECORDING,
            facts::{record, Fact},
        };
        use tokio::io::AsyncReadExt;

        let mut size: i64 = 0;
        let mut seq: i64 = 0;
        let mut chunk = vec![0u8; CHUNK_BYTES];
        loop {
            // Fill a whole chunk (a read may return less), so that every chunk
            // but the last is exactly CHUNK_BYTES and a byte range maps to one.
            let mut filled = 0;
            while filled < CHUNK_BYTES {
                let n = file
                    .read(&mut chunk[filled..])
                    .await
                    .map_err(|e| CoreError::Internal(format!("reading a recording: {e}")))?;
                if n == 0 {
                    break;
                }
                filled += n;
            }
            if filled == 0 {
                break;
            }
            // The chunk's object first, then the row that names it (see
            // `media_store`).
            let key = MediaStore::new_key(MediaKind::CallRecording, tenant_id, now_ms());
            self.media().put(&key, Bytes::copy_from_slice(&chunk[..filled])).await?;
            let stored = with_db!(self.writer(), |pool| sqlx::query(
                "insert into conference_recording_chunks (recording_id, seq, blob_key) values ($1, $2, $3)"
            )
            .bind(id)
            .bind(seq)
            .bind(&key)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()));
            if let Err(e) = stored {
                self.forget_object(MediaKind::CallRecording, &key).await;
                return Err(e.into());
            }
            size += filled as i64;
            seq += 1;
            if filled < CHUNK_BYTES {
                break;
            }
        }
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update conference_recordings set size = $2, stored_at = $3 where id = $1"
        )
        .bind(id)
        .bind(size)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        let system = Actor::system("conference");
        audit::record(
            &mut tx,
            Some(tenant_id),
            &system,
            "conference.recording",
            "appointment",
            Some(&recording.appointment_id),
        )
        .await?;
        let fact = Fact {
            kind: CONFERENCE_RECORDING,
            at: recording.started_at,
            value: (recording.ended_at - recording.started_at).max(0),
            agent: recording.host.as_deref(),
            subject: Some(&recording.appointment_id),
            dedupe: Some(id),
            ..Fact::default()
        };
        record(&mut tx, tenant_id, &fact).await?;
        tx.commit().await
    }

    /// The recordings of one appointment, oldest first.
    pub async fn list_conference_recordings(
        &self,
        tenant_id: &TenantId,
        appointment_id: &AppointmentId,
    ) -> CoreResult<Vec<ConferenceRecording>> {
        self.get_appointment(tenant_id, appointment_id).await?;
        let sql = format!(
            "select {COLUMNS} from conference_recordings where tenant_id = $1 and appointment_id = $2 \
             and stored_at is not null order by started_at, id"
        );
        let rows: Vec<RecordingRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(appointment_id)
            .fetch_all(pool)
            .await)?;
        Ok(rows.into_iter().map(Into::into).collect())
    }

    /// One recording of an appointment.
    pub async fn conference_recording(
        &self,
        tenant_id: &TenantId,
        appointment_id: &AppointmentId,
        id: &str,
    ) -> CoreResult<ConferenceRecording> {
        let sql = format!(
            "select {COLUMNS} from conference_recordings where tenant_id = $1 and appointment_id = $2 and id = $3 \
             and stored_at is not null"
        );
        let row: Option<RecordingRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(appointment_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.map(Into::into).ok_or(CoreError::NotFound("recording"))
    }

    /// Chunk `seq` of a recording (the caller has found the recording in its
    /// tenant first); `None` past the end.
    pub async fn conference_recording_chunk(&self, id: &str, seq: i64) -> CoreResult<Option<Vec<u8>>> {
        let row: Option<(Option<Vec<u8>>, Option<String>)> = with_db!(self.db(), |pool| sqlx::query_as(
            "select data, blob_key from conference_recording_chunks where recording_id = $1 and seq = $2"
        )
        .bind(id)
        .bind(seq)
        .fetch_optional(pool)
        .await)?;
        match row {
            Some((data, blob_key)) => Ok(Some(RowMedia::from_columns(data, blob_key)?.read(self.media()).await?)),
            None => Ok(None),
        }
    }

    /// Deletes up to `batch` conference recordings (with their chunks) that
    /// ended longer ago than their workspace's `conferenceRetentionDays`.
    pub async fn prune_conference_recordings(&self, now: i64, batch: i64) -> CoreResult<u64> {
        let mut tx = self.db().begin().await?;
        let deleted = with_tx!(&mut tx, |conn| sqlx::query(
            "delete from conference_recordings where id in (select r.id \
             from conference_recordings r join tenants t on t.id = r.tenant_id \
             where r.ended_at < $1 - t.conference_retention_days * 86400000 limit $2)"
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
