//! Unit tests of the recorder's muxer: a camera turned off and on, and who makes no file.

use super::*;
use crate::media::{rooms::Member, sfu::TrackInfo};
use str0m::{
    format::Codec,
    media::{Frequency, MediaTime, Mid},
};

/// A VP8 keyframe header of 640×360, and filler.
fn keyframe() -> Vec<u8> {
    let mut data = vec![0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x80, 0x02, 0x68, 0x01];
    data.extend(std::iter::repeat_n(0xab, 100));
    data
}

struct Call {
    muxer: Muxer,
    stored: tokio::sync::mpsc::UnboundedReceiver<Finished>,
    camera: Arc<TrackInfo>,
    mic: Arc<TrackInfo>,
    origin: Instant,
    _dir: tempfile::TempDir,
}

impl Call {
    /// A recorded room with Ann in it.
    fn new() -> Call {
        let rooms = Arc::new(Rooms::default());
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let ann = Member {
            id: "ann".into(),
            name: "Ann".into(),
            host: None,
            admitted: false,
            tx,
        };
        rooms.enter("room", &TenantId::new("tenant"), true, ann, true).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let (finished, stored) = tokio::sync::mpsc::unbounded_channel();
        let mut muxer = Muxer {
            rooms,
            dir: dir.path().join("recordings"),
            finished,
            queued: Arc::default(),
            dropped: Arc::default(),
            seen_dropped: 0,
            storing: Arc::default(),
            open: HashMap::new(),
            tracks: HashMap::new(),
        };
        muxer.open.insert("room".into(), "tenant".into());
        let track = |source: &str, kind, mid: &str| {
            Arc::new(TrackInfo {
                room: "room".into(),
                participant: "ann".into(),
                source: source.into(),
                kind,
                mid: Mid::from(mid),
            })
        };
        Call {
            muxer,
            stored,
            camera: track("camera", MediaKind::Video, "1"),
            mic: track("mic", MediaKind::Audio, "0"),
            origin: Instant::now() - Duration::from_secs(120),
            _dir: dir,
        }
    }

    fn sound(&mut self, ms: u64) {
        let frame = TapFrame {
            track: self.mic.clone(),
            codec: Codec::Opus,
            clock_rate: 48_000,
            rtp_time: MediaTime::new(ms * 48, Frequency::FORTY_EIGHT_KHZ),
            network_time: self.origin + Duration::from_millis(ms),
            keyframe: false,
            contiguous: true,
            data: Arc::from(&[0xfc_u8, 1, 2, 3][..]),
        };
        self.muxer.frame(frame);
    }

    fn picture(&mut self, ms: u64, key: bool) {
        let data = if key { keyframe() } else { vec![0x11; 50] };
        let frame = TapFrame {
            track: self.camera.clone(),
            codec: Codec::Vp8,
            clock_rate: 90_000,
            rtp_time: MediaTime::new(ms * 90, Frequency::NINETY_KHZ),
            network_time: self.origin + Duration::from_millis(ms),
            keyframe: key,
            contiguous: true,
            data: Arc::from(data),
        };
        self.muxer.frame(frame);
    }

    /// The files finished so far: (tracks' codecs, seconds).
    fn files(&mut self) -> Vec<(Vec<String>, f64)> {
        let mut files = Vec::new();
        while let Ok(done) = self.stored.try_recv() {
            let mkv = matroska_demuxer::MatroskaFile::open(std::fs::File::open(&done.path).unwrap()).unwrap();
            let codecs = mkv.tracks().iter().map(|t| t.codec_id().to_string()).collect();
            let scale = mkv.info().timestamp_scale().get() as f64;
            files.push((codecs, mkv.info().duration().unwrap_or(0.0) * scale / 1e9));
        }
        files
    }
}

#[test]
fn a_camera_turned_off_and_on_splits_the_file_and_loses_no_sound() {
    let mut call = Call::new();
    // Sound only for 3 s (camera off): after 2 s it is recorded alone.
    for ms in (0..3_000).step_by(20) {
        call.sound(ms);
    }
    // The camera comes on: the sound-only file ends, a camera file starts.
    for ms in (3_000..9_000).step_by(20) {
        call.sound(ms);
        if ms % 40 == 0 {
            call.picture(ms, ms % 1_000 == 0);
        }
    }
    let first = call.files();
    assert_eq!(first.len(), 1, "{first:?}");
    assert_eq!(first[0].0, vec!["A_OPUS"]);
    assert!((2.9..=3.1).contains(&first[0].1), "{first:?}");
    // The camera goes off for 6 s: the camera file ends, the sound goes on alone.
    for ms in (9_000..15_000).step_by(20) {
        call.sound(ms);
    }
    let second = call.files();
    assert_eq!(second.len(), 1, "{second:?}");
    assert_eq!(second[0].0, vec!["V_VP8", "A_OPUS"]);
    // Ann leaves: the last file ends.
    call.muxer.end_where(|_| true);
    let third = call.files();
    assert_eq!(third.len(), 1, "{third:?}");
    assert_eq!(third[0].0, vec!["A_OPUS"]);
    let total: f64 = first.iter().chain(&second).chain(&third).map(|f| f.1).sum();
    assert!((14.5..=15.5).contains(&total), "15 s of sound in all: {total}");
}

#[test]
fn a_participant_who_left_or_a_room_not_recorded_makes_no_file() {
    let mut call = Call::new();
    call.muxer.open.clear();
    for ms in (0..3_000).step_by(20) {
        call.sound(ms);
    }
    call.muxer.open.insert("room".into(), "tenant".into());
    call.muxer.rooms.take("room", "ann");
    for ms in (3_000..6_000).step_by(20) {
        call.sound(ms);
    }
    call.muxer.end_where(|_| true);
    assert!(call.files().is_empty());
}
