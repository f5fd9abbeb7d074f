//! Recording calls: while an appointment's `record` switch is on, each
//! participant's camera and microphone go into one WebM file, and a shared
//! screen into another ([`super::webm`]).
//!
//! The SFU hands every frame of a recorded room to [`Recorder::tap`], which
//! only queues it: muxing and writing run on a thread of their own, so a slow
//! disk never holds up forwarding (past [`MAX_QUEUED`] frames, new ones are
//! dropped). A file is finished when its participant leaves, when recording
//! is switched off, when the call ends, or after [`IDLE`] without a frame.
//! Finished files are stored in the database (see
//! `rapport_core::appointments::recordings`) and deleted here.

use std::{
    collections::{HashMap, HashSet},
    path::PathBuf,
    sync::{
        atomic::{AtomicUsize, Ordering},
        mpsc::{self, RecvTimeoutError},
        Arc, Mutex,
    },
    time::{Duration, Instant},
};

use rapport_core::{
    appointments::recordings::{NewConferenceRecording, RecordingSource},
    Services,
};
use str0m::media::MediaKind;

use super::{
    rooms::Rooms,
    sfu::{MediaTap, TapFrame},
    webm::{vp8_keyframe_size, Frame, FrameKind, WebmFile},
};

/// Frames waiting for the muxing thread at most; more are dropped.
const MAX_QUEUED: usize = 4096;
/// A file that gets no frame for this long is finished.
const IDLE: Duration = Duration::from_secs(30);
/// How long a camera file waits for a keyframe (to learn the picture's size)
/// before it starts anyway; its sound is kept meanwhile.
const KEYFRAME_WAIT: Duration = Duration::from_secs(2);

enum Input {
    Start { room: String, tenant_id: String },
    Stop { room: String },
    Left { room: String, participant: String },
    Frame(TapFrame),
}

/// The recorder of this instance's calls.
pub struct Recorder {
    input: Mutex<mpsc::Sender<Input>>,
    queued: Arc<AtomicUsize>,
    /// Rooms being recorded: the tap's filter.
    recording: Arc<Mutex<HashSet<Arc<str>>>>,
}

impl Recorder {
    /// Starts the muxing thread (files in `dir`) and the task that stores
    /// finished files through `services`.
    pub fn start(services: Services, rooms: Arc<Rooms>, dir: PathBuf) -> Self {
        let (input, inputs) = mpsc::channel();
        let (finished_tx, mut finished) = tokio::sync::mpsc::unbounded_channel::<Finished>();
        let queued = Arc::new(AtomicUsize::new(0));
        let thread_queued = queued.clone();
        std::thread::Builder::new()
            .name("rapport-recorder".into())
            .spawn(move || Muxer::new(rooms, dir, finished_tx, thread_queued).run(inputs))
            .expect("the recorder thread starts");
        tokio::spawn(async move {
            while let Some(done) = finished.recv().await {
                store(&services, done).await;
            }
        });
        Recorder {
            input: Mutex::new(input),
            queued,
            recording: Arc::default(),
        }
    }

    fn send(&self, input: Input) {
        let _ = self.input.lock().unwrap_or_else(|e| e.into_inner()).send(input);
    }

    /// Where the SFU hands frames: those of recorded rooms are queued.
    pub fn tap(&self) -> MediaTap {
        let input = self.input.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let input = Mutex::new(input);
        let (queued, recording) = (self.queued.clone(), self.recording.clone());
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
                tracing::warn!("recorder: behind, a frame is dropped");
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
    pub fn record(&self, room: &str, tenant_id: &str) {
        if self
            .recording
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(room.into())
        {
            // Before any of its frames: the thread opens the room first.
            self.send(Input::Start {
                room: room.to_string(),
                tenant_id: tenant_id.to_string(),
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
struct Finished {
    tenant_id: String,
    path: PathBuf,
    recording: NewConferenceRecording,
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

/// Which file of a participant a frame goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
    /// Camera and microphone.
    Camera,
    /// A shared screen.
    Screen,
}

/// A frame kept until its file starts.
struct Held {
    kind: FrameKind,
    rtp_time: u64,
    clock_rate: u64,
    arrived: Instant,
    keyframe: bool,
    data: Arc<[u8]>,
}

/// A file of one participant and group: waiting for its first keyframe, or
/// being written.
struct Track {
    tenant_id: String,
    participant: String,
    host: Option<String>,
    started_at: i64,
    first: Instant,
    last: Instant,
    held: Vec<Held>,
    file: Option<WebmFile>,
}

/// The muxing thread's state.
struct Muxer {
    rooms: Arc<Rooms>,
    dir: PathBuf,
    finished: tokio::sync::mpsc::UnboundedSender<Finished>,
    queued: Arc<AtomicUsize>,
    /// Recorded rooms, with their tenants.
    open: HashMap<String, String>,
    tracks: HashMap<(String, String, Group), Track>,
}

impl Muxer {
    fn new(
        rooms: Arc<Rooms>,
        dir: PathBuf,
        finished: tokio::sync::mpsc::UnboundedSender<Finished>,
        queued: Arc<AtomicUsize>,
    ) -> Self {
        Muxer {
            rooms,
            dir,
            finished,
            queued,
            open: HashMap::new(),
            tracks: HashMap::new(),
        }
    }

    fn run(mut self, inputs: mpsc::Receiver<Input>) {
        loop {
            match inputs.recv_timeout(Duration::from_secs(1)) {
                Ok(Input::Start { room, tenant_id }) => {
                    self.open.insert(room, tenant_id);
                }
                Ok(Input::Stop { room }) => {
                    self.open.remove(&room);
                    self.finish_where(|(r, _, _)| *r == room);
                }
                Ok(Input::Left { room, participant }) => {
                    self.finish_where(|(r, p, _)| *r == room && *p == participant);
                }
                Ok(Input::Frame(frame)) => {
                    self.queued.fetch_sub(1, Ordering::Relaxed);
                    self.frame(frame);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            let now = Instant::now();
            self.finish_where_track(|t| now.duration_since(t.last) >= IDLE);
        }
        self.finish_where(|_| true);
    }

    fn frame(&mut self, frame: TapFrame) {
        let room = frame.track.room.to_string();
        let Some(tenant_id) = self.open.get(&room).cloned() else {
            return; // queued before the recording stopped
        };
        let (group, kind) = match (&*frame.track.source, frame.track.kind) {
            ("screen", MediaKind::Video) => (Group::Screen, FrameKind::Video),
            (_, MediaKind::Video) => (Group::Camera, FrameKind::Video),
            (_, MediaKind::Audio) => (Group::Camera, FrameKind::Audio),
        };
        let participant = frame.track.participant.to_string();
        let key = (room.clone(), participant.clone(), group);
        let now = Instant::now();
        if !self.tracks.contains_key(&key) {
            // Named as they are in the call; one who already left is not recorded.
            let Some((name, host)) = self.rooms.name_and_host(&room, &participant) else {
                return;
            };
            self.tracks.insert(
                key.clone(),
                Track {
                    tenant_id,
                    participant: name,
                    host,
                    started_at: rapport_core::time::now_ms(),
                    first: frame.network_time,
                    last: now,
                    held: Vec::new(),
                    file: None,
                },
            );
        }
        let Some(track) = self.tracks.get_mut(&key) else { return };
        track.last = now;
        let held = Held {
            kind,
            rtp_time: frame.rtp_time.numer(),
            clock_rate: u64::from(frame.clock_rate),
            arrived: frame.network_time,
            keyframe: frame.keyframe,
            data: frame.data,
        };
        if track.file.is_none() {
            let size = (kind == FrameKind::Video && held.keyframe)
                .then(|| vp8_keyframe_size(&held.data))
                .flatten();
            let waited = frame.network_time.saturating_duration_since(track.first) >= KEYFRAME_WAIT;
            // A screen has nothing before its first picture; a camera file
            // starts at the first keyframe, or without one after a while
            // (the camera is off) so that the sound is kept.
            let start = size.is_some() || (group == Group::Camera && waited);
            if !start {
                track.held.push(held);
                return;
            }
            let path = self.dir.join(format!("{}.webm", uuid::Uuid::new_v4()));
            match WebmFile::create(&path, size, group == Group::Camera, track.first) {
                Ok(file) => track.file = Some(file),
                Err(e) => {
                    tracing::error!(error = %e, "recorder: cannot start a file");
                    self.tracks.remove(&key);
                    return;
                }
            }
        }
        let Some(track) = self.tracks.get_mut(&key) else { return };
        let Some(file) = track.file.as_mut() else { return };
        let mut failed = None;
        for h in track.held.drain(..).chain(std::iter::once(held)) {
            let written = file.write(Frame {
                kind: h.kind,
                rtp_time: h.rtp_time,
                clock_rate: h.clock_rate,
                arrived: h.arrived,
                keyframe: h.keyframe,
                data: &h.data,
            });
            if let Err(e) = written {
                failed = Some(e);
                break;
            }
        }
        if let Some(e) = failed {
            tracing::error!(error = %e, "recorder: cannot write a frame; the file ends here");
            self.finish(key);
        }
    }

    fn finish_where(&mut self, which: impl Fn(&(String, String, Group)) -> bool) {
        let keys: Vec<_> = self.tracks.keys().filter(|k| which(k)).cloned().collect();
        for key in keys {
            self.finish(key);
        }
    }

    fn finish_where_track(&mut self, which: impl Fn(&Track) -> bool) {
        let keys: Vec<_> = self
            .tracks
            .iter()
            .filter(|(_, t)| which(t))
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.finish(key);
        }
    }

    /// Finishes one file and hands it on to be stored.
    fn finish(&mut self, key: (String, String, Group)) {
        let Some(track) = self.tracks.remove(&key) else { return };
        let Some(file) = track.file else { return };
        if file.frames() == 0 {
            file.discard();
            return;
        }
        let ended_at = track.started_at
            + i64::try_from(track.last.saturating_duration_since(track.first).as_millis()).unwrap_or(0);
        match file.finish() {
            Ok(path) => {
                let (room, _, group) = key;
                let _ = self.finished.send(Finished {
                    tenant_id: track.tenant_id,
                    path,
                    recording: NewConferenceRecording {
                        appointment_id: room,
                        participant: track.participant,
                        source: match group {
                            Group::Camera => RecordingSource::Camera,
                            Group::Screen => RecordingSource::Screen,
                        },
                        started_at: track.started_at,
                        ended_at,
                        host: track.host,
                    },
                });
            }
            Err(e) => tracing::error!(error = %e, "recorder: cannot finish a file"),
        }
    }
}
