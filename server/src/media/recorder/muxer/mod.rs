//! The muxing thread: frames of recorded rooms in, WebM files out, one per
//! participant's camera (with sound) or screen, split when the picture stops
//! and comes back (see the parent module for when files end).

use std::{
    collections::HashMap,
    path::PathBuf,
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        mpsc::{self, RecvTimeoutError},
        Arc,
    },
    time::{Duration, Instant},
};

use rapport_core::appointments::recordings::{NewConferenceRecording, RecordingSource};
use rapport_core::ids::{AppointmentId, TenantId};
use str0m::media::MediaKind;

use super::{Finished, Input};
use crate::media::{
    rooms::Rooms,
    sfu::TapFrame,
    webm::{vp8_keyframe_size, Frame, FrameKind, WebmFile},
};

/// A file that gets no frame for this long is finished.
const IDLE: Duration = Duration::from_secs(30);
/// How long a camera file waits for a keyframe (to learn the picture's size)
/// before its sound is recorded alone; the sound is kept meanwhile.
const KEYFRAME_WAIT: Duration = Duration::from_secs(2);
/// A camera file whose picture stops this long (the camera was turned off)
/// ends, and the sound goes on in a file of its own.
const VIDEO_GAP: Duration = Duration::from_secs(5);
/// Sound frames kept at most while a file waits for its first keyframe.
const MOST_HELD: usize = 500;

/// Which file of a participant a frame goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Group {
    /// Camera and microphone.
    Camera,
    /// A shared screen.
    Screen,
}

/// A sound frame kept until its file starts.
struct Held {
    rtp_time: u64,
    clock_rate: u64,
    arrived: Instant,
    data: Arc<[u8]>,
}

/// A file being written.
struct OpenFile {
    webm: WebmFile,
    /// Whether it has a picture (else it is sound alone).
    video: bool,
    /// Its first frame: unix ms, and when it arrived.
    started_at: i64,
    first: Instant,
}

/// One participant's camera (with sound) or screen while recorded.
struct Track {
    tenant_id: TenantId,
    participant: String,
    host: Option<String>,
    /// When the wait for a first keyframe began.
    waiting_since: Instant,
    /// The last frame of any kind, and of video.
    last: Instant,
    last_video: Option<Instant>,
    held: Vec<Held>,
    file: Option<OpenFile>,
}

type Key = (String, String, Group);

/// The muxing thread's state.
pub(super) struct Muxer {
    rooms: Arc<Rooms>,
    dir: PathBuf,
    finished: tokio::sync::mpsc::UnboundedSender<Finished>,
    queued: Arc<AtomicUsize>,
    dropped: Arc<AtomicU64>,
    seen_dropped: u64,
    storing: Arc<AtomicUsize>,
    /// Recorded rooms, with their tenants.
    open: HashMap<String, TenantId>,
    tracks: HashMap<Key, Track>,
}

impl Muxer {
    /// A muxer writing into `dir`, handing finished files to `finished`; the
    /// counters are shared with the [`super::Recorder`] that feeds it.
    pub(super) fn new(
        rooms: Arc<Rooms>,
        dir: PathBuf,
        finished: tokio::sync::mpsc::UnboundedSender<Finished>,
        queued: Arc<AtomicUsize>,
        dropped: Arc<AtomicU64>,
        storing: Arc<AtomicUsize>,
    ) -> Muxer {
        Muxer {
            rooms,
            dir,
            finished,
            queued,
            dropped,
            seen_dropped: 0,
            storing,
            open: HashMap::new(),
            tracks: HashMap::new(),
        }
    }

    pub(super) fn run(mut self, inputs: mpsc::Receiver<Input>) {
        loop {
            match inputs.recv_timeout(Duration::from_secs(1)) {
                Ok(Input::Start { room, tenant_id }) => {
                    self.open.insert(room, tenant_id);
                }
                Ok(Input::Stop { room }) => {
                    self.open.remove(&room);
                    self.end_where(|(r, _, _)| *r == room);
                }
                Ok(Input::Left { room, participant }) => {
                    self.end_where(|(r, p, _)| *r == room && *p == participant);
                }
                Ok(Input::Frame(frame)) => {
                    self.queued.fetch_sub(1, Ordering::Relaxed);
                    self.frame(frame);
                }
                Ok(Input::Barrier(done)) => {
                    let _ = done.send(());
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            let now = Instant::now();
            let idle: Vec<Key> = self
                .tracks
                .iter()
                .filter(|(_, t)| now.duration_since(t.last) >= IDLE)
                .map(|(k, _)| k.clone())
                .collect();
            for key in idle {
                self.end(&key);
            }
        }
        self.end_where(|_| true);
    }

    fn frame(&mut self, frame: TapFrame) {
        let room = frame.track.room.to_string();
        let Some(tenant_id) = self.open.get(&room).cloned() else {
            return; // queued before the recording stopped
        };
        // Frames were lost (upstream, or dropped here): the picture is
        // broken until the next keyframe, so none is written before it.
        let dropped = self.dropped.load(Ordering::Relaxed);
        if dropped != self.seen_dropped {
            self.seen_dropped = dropped;
            for file in self.tracks.values_mut().filter_map(|t| t.file.as_mut()) {
                file.webm.wait_for_keyframe();
            }
        }
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
                    waiting_since: frame.network_time,
                    last: now,
                    last_video: None,
                    held: Vec::new(),
                    file: None,
                },
            );
        }
        let Some(track) = self.tracks.get_mut(&key) else { return };
        track.last = now;
        let keyframe_size = (kind == FrameKind::Video && frame.keyframe)
            .then(|| vp8_keyframe_size(&frame.data))
            .flatten();
        if kind == FrameKind::Video {
            track.last_video = Some(frame.network_time);
            if !frame.contiguous {
                if let Some(file) = track.file.as_mut() {
                    file.webm.wait_for_keyframe();
                }
            }
        }
        let arrived = frame.network_time;
        // What this frame does to the file: start one, split it, or neither.
        let start = match (&track.file, group, kind) {
            // A picture needs a keyframe first; a screen has nothing else.
            (None, _, FrameKind::Video) => keyframe_size.map(Some),
            (None, _, FrameKind::Audio) if arrived.saturating_duration_since(track.waiting_since) >= KEYFRAME_WAIT => {
                Some(None)
            }
            // The camera came (back) on: the sound-only file ends here.
            (Some(file), Group::Camera, FrameKind::Video) if !file.video => keyframe_size.map(Some),
            // The camera went off: the file ends, the sound goes on alone.
            (Some(file), Group::Camera, FrameKind::Audio)
                if file.video
                    && track
                        .last_video
                        .is_none_or(|v| arrived.saturating_duration_since(v) >= VIDEO_GAP) =>
            {
                Some(None)
            }
            _ => None,
        };
        if let Some(size) = start {
            self.finish_file(&key);
            let Some(track) = self.tracks.get_mut(&key) else { return };
            if let Err(e) = std::fs::create_dir_all(&self.dir) {
                tracing::error!(error = %e, dir = %self.dir.display(), "recorder: cannot write recordings");
                return;
            }
            let path = self.dir.join(format!("{}.webm", uuid::Uuid::new_v4()));
            let first = track.held.first().map_or(arrived, |h| h.arrived);
            let with_audio = group == Group::Camera;
            match WebmFile::create(&path, size, with_audio, first) {
                Ok(webm) => {
                    track.file = Some(OpenFile {
                        webm,
                        video: size.is_some(),
                        started_at: rapport_core::time::now_ms()
                            - i64::try_from(arrived.saturating_duration_since(first).as_millis()).unwrap_or(0),
                        first,
                    })
                }
                Err(e) => {
                    tracing::error!(error = %e, "recorder: cannot start a file");
                    return;
                }
            }
        }
        let Some(track) = self.tracks.get_mut(&key) else { return };
        let Some(file) = track.file.as_mut() else {
            // Waiting for a first keyframe: the sound is kept meanwhile.
            if kind == FrameKind::Audio {
                if track.held.len() >= MOST_HELD {
                    track.held.remove(0);
                }
                track.held.push(Held {
                    rtp_time: frame.rtp_time.numer(),
                    clock_rate: u64::from(frame.clock_rate),
                    arrived,
                    data: frame.data,
                });
            }
            return;
        };
        let held = std::mem::take(&mut track.held);
        let frames = held
            .iter()
            .map(|h| Frame {
                kind: FrameKind::Audio,
                rtp_time: h.rtp_time,
                clock_rate: h.clock_rate,
                arrived: h.arrived,
                keyframe: false,
                data: &h.data,
            })
            .chain(std::iter::once(Frame {
                kind,
                rtp_time: frame.rtp_time.numer(),
                clock_rate: u64::from(frame.clock_rate),
                arrived,
                keyframe: frame.keyframe,
                data: &frame.data,
            }));
        for f in frames {
            if let Err(e) = file.webm.write(f) {
                tracing::error!(error = %e, "recorder: cannot write a frame; the file ends here");
                self.finish_file(&key);
                return;
            }
        }
    }

    fn end_where(&mut self, which: impl Fn(&Key) -> bool) {
        let keys: Vec<Key> = self.tracks.keys().filter(|k| which(k)).cloned().collect();
        for key in keys {
            self.end(&key);
        }
    }

    /// A participant's camera or screen is no longer recorded: its file is finished.
    fn end(&mut self, key: &Key) {
        self.finish_file(key);
        self.tracks.remove(key);
    }

    /// Finishes the track's open file, if any, and hands it on to be stored.
    fn finish_file(&mut self, key: &Key) {
        let Some(track) = self.tracks.get_mut(key) else { return };
        let Some(file) = track.file.take() else { return };
        if file.webm.frames() == 0 {
            file.webm.discard();
            return;
        }
        let ended_at =
            file.started_at + i64::try_from(track.last.saturating_duration_since(file.first).as_millis()).unwrap_or(0);
        let path = file.webm.path().to_path_buf();
        match file.webm.finish() {
            Ok(path) => {
                let (room, _, group) = key.clone();
                self.storing.fetch_add(1, Ordering::AcqRel);
                let sent = self.finished.send(Finished {
                    tenant_id: track.tenant_id.clone(),
                    path,
                    recording: NewConferenceRecording {
                        appointment_id: AppointmentId::from(room),
                        participant: track.participant.clone(),
                        source: match group {
                            Group::Camera => RecordingSource::Camera,
                            Group::Screen => RecordingSource::Screen,
                        },
                        started_at: file.started_at,
                        ended_at,
                        host: track.host.clone(),
                    },
                });
                if sent.is_err() {
                    self.storing.fetch_sub(1, Ordering::AcqRel);
                }
            }
            Err(e) => tracing::error!(error = %e, path = %path.display(), "recorder: cannot finish a file; it is kept"),
        }
    }
}

#[cfg(test)]
mod tests;
