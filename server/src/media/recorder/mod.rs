//! Recording calls: while an appointment's `record` switch is on, each
//! participant's camera and microphone go into one WebM file, and a shared
//! screen into another ([`super::webm`]).
//!
//! The SFU hands every frame of a recorded room to [`Recorder::tap`], which
//! only queues it: muxing and writing run on a thread of their own, so a slow
//! disk never holds up forwarding (past [`MAX_QUEUED`] frames, new ones are
//! dropped). A file is finished when its participant leaves, when recording
//! is switched off, when the call ends, or after [`IDLE`] without a frame.
//! A camera that is off (or not there) does not lose the sound: while no
//! picture comes, the sound goes into a file of its own, and the file is
//! split again when the picture comes back, so a participant may have several
//! files. Finished files are stored in the media store (see
//! `rapport_core::appointments::recordings`) and deleted here. On shutdown the
//! files open are finished and stored first; a file left by a crash cannot be
//! finished, and is named in the log at the next start.

use std::{
    collections::HashSet,
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        mpsc, Arc, Mutex,
    },
    time::Duration,
};

use rapport_core::{appointments::recordings::NewConferenceRecording, ids::TenantId, Services};

mod muxer;

use muxer::Muxer;

use super::{
    rooms::Rooms,
    sfu::{MediaTap, TapFrame},
};

/// Frames waiting for the muxing thread at most; more are dropped.
const MAX_QUEUED: usize = 4096;
/// How long a shutdown waits for the open files to be stored.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(60);

/// What the muxing thread is told.
pub(super) enum Input {
    Start {
        room: String,
        tenant_id: TenantId,
    },
    Stop {
        room: String,
    },
    Left {
        room: String,
        participant: String,
    },
    Frame(TapFrame),
    /// Answered once everything sent before it is done.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

/// The recorder of this instance's calls.
pub struct Recorder {
    input: Mutex<mpsc::Sender<Input>>,
    queued: Arc<AtomicUsize>,
    /// Frames the tap dropped, all told: the muxer waits for a keyframe after.
    dropped: Arc<AtomicU64>,
    /// Finished files not yet stored.
    storing: Arc<AtomicUsize>,
    /// Rooms being recorded: the tap's filter.
    recording: Arc<Mutex<HashSet<Arc<str>>>>,
}

impl Recorder {
    /// Starts the muxing thread (files in `dir`) and the task that stores
    /// finished files through `services`.
    pub fn start(services: Services, rooms: Arc<Rooms>, dir: PathBuf) -> Self {
        report_leftovers(&dir);
        let (input, inputs) = mpsc::channel();
        let (finished_tx, mut finished) = tokio::sync::mpsc::unbounded_channel::<Finished>();
        let queued = Arc::new(AtomicUsize::new(0));
        let dropped = Arc::new(AtomicU64::new(0));
        let storing = Arc::new(AtomicUsize::new(0));
        let muxer = Muxer::new(
            rooms,
            dir,
            finished_tx,
            queued.clone(),
            dropped.clone(),
            storing.clone(),
        );
        std::thread::Builder::new()
            .name("rapport-recorder".into())
            .spawn(move || muxer.run(inputs))
            .expect("the recorder thread starts");
        let stored = storing.clone();
        tokio::spawn(async move {
            while let Some(done) = finished.recv().await {
                store(&services, done).await;
                stored.fetch_sub(1, Ordering::AcqRel);
            }
        });
        Recorder {
            input: Mutex::new(input),
            queued,
            dropped,
            storing,
            recording: Arc::default(),
        }
    }

    /// Finishes every open file and waits (a while) until all are stored:
    /// for a shutdown.
    pub async fn finish_all(&self) {
        let rooms: Vec<Arc<str>> = self
            .recording
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        for room in rooms {
            self.stop(&room);
        }
        let (done, finished) = tokio::sync::oneshot::channel();
        self.send(Input::Barrier(done));
        let stored = async {
            let _ = finished.await;
            while self.storing.load(Ordering::Acquire) > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        };
        if tokio::time::timeout(SHUTDOWN_WAIT, stored).await.is_err() {
            tracing::warn!("recorder: shutting down before every recording was stored");
        }
    }

    fn send(&self, input: Input) {
        let _ = self.input.lock().unwrap_or_else(|e| e.into_inner()).send(input);
    }

    /// Where the SFU hands frames: those of recorded rooms are queued.
    pub fn tap(&self) -> MediaTap {
        let input = self.input.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let input = Mutex::new(input);
        let (queued, dropped, recording) = (self.queued.clone(), self.dropped.clone(), self.recording.clone());
        Arc::new(move |frame: TapFrame| {
            if !recording
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(&frame.track.room)
            {
                return;
            }
            if queued.fetch_add(1, Ordering::Relaxed) >= MAX_QUEUED {
                queued.fetch_sub(1, Ordering::Relaxed);
                if dropped.fetch_add(1, Ordering::Relaxed) % 100 == 0 {
                    tracing::warn!("recorder: behind, frames are dropped");
                }
                return;
            }
            let _ = input
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .send(Input::Frame(frame));
        })
    }

    /// Whether `room` is being recorded.
    pub fn is_recording(&self, room: &str) -> bool {
        self.recording.lock().unwrap_or_else(|e| e.into_inner()).contains(room)
    }

    /// Starts recording `room` (an appointment of `tenant_id`); nothing when it is already.
    pub fn record(&self, room: &str, tenant_id: &TenantId) {
        if self
            .recording
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(room.into())
        {
            // Before any of its frames: the thread opens the room first.
            self.send(Input::Start {
                room: room.to_string(),
                tenant_id: tenant_id.clone(),
            });
        }
    }

    /// Stops recording `room` and finishes its files.
    pub fn stop(&self, room: &str) {
        if self.recording.lock().unwrap_or_else(|e| e.into_inner()).remove(room) {
            self.send(Input::Stop { room: room.to_string() });
        }
    }

    /// A participant left: their files are finished.
    pub fn left(&self, room: &str, participant: &str) {
        if self.is_recording(room) {
            self.send(Input::Left {
                room: room.to_string(),
                participant: participant.to_string(),
            });
        }
    }
}

/// A finished file, to store.
pub(super) struct Finished {
    pub(super) tenant_id: TenantId,
    pub(super) path: PathBuf,
    pub(super) recording: NewConferenceRecording,
}

/// Names the files a crash left unfinished: they cannot be played or stored.
fn report_leftovers(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "webm") {
            tracing::warn!(path = %path.display(), "recorder: a recording left unfinished by a stop; it was not stored");
        }
    }
}

/// Stores a finished file and deletes it here; a file that cannot be stored
/// is kept, and its path logged, so nothing recorded is lost.
async fn store(services: &Services, done: Finished) {
    let appointment = &done.recording.appointment_id;
    if let Err(rapport_core::CoreError::NotFound(_)) = services.get_appointment(&done.tenant_id, appointment).await {
        // Deleted during the call: there is nothing to keep it for.
        tracing::info!(%appointment, "conference recording dropped: its appointment is gone");
        let _ = tokio::fs::remove_file(&done.path).await;
        return;
    }
    let stored = match tokio::fs::File::open(&done.path).await {
        Ok(file) => services
            .store_conference_recording(&done.tenant_id, &done.recording, file)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match stored {
        Ok(stored) => {
            tracing::info!(recording = %stored.id, %appointment, bytes = stored.size, "conference recording stored");
            let _ = tokio::fs::remove_file(&done.path).await;
        }
        Err(e) => tracing::error!(error = %e, path = %done.path.display(),
            "conference recording not stored; the file is kept"),
    }
}
