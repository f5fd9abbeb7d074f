//! One WebM file of a call: a participant's VP8 video, with their Opus sound
//! when it is the camera, muxed by libwebm (the `webm` crate) into a file.
//!
//! The SFU forwards frames without decoding them, so they are written as they
//! came. Timestamps come from each track's RTP clock, anchored at the frame's
//! arrival, and never go backwards across the file's tracks, which libwebm's
//! clusters need. Video before the first keyframe is left out, since nothing
//! could decode it.

use std::{
    collections::HashMap,
    fs::File,
    io::BufWriter,
    path::{Path, PathBuf},
    time::Instant,
};

use ::webm::mux::{AudioCodecId, AudioTrack, Segment, SegmentBuilder, SegmentMode, VideoCodecId, VideoTrack, Writer};

/// A track whose RTP time strays this far from its arrival time (a sender
/// that restarted its clock) is anchored again.
const REANCHOR_NS: u64 = 2_000_000_000;

/// The kind of a frame handed to [`WebmFile::write`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameKind {
    /// VP8.
    Video,
    /// Opus.
    Audio,
}

/// One frame to write.
#[derive(Debug, Clone, Copy)]
pub struct Frame<'a> {
    /// Video or audio.
    pub kind: FrameKind,
    /// The RTP time in `clock_rate` units (extended, so it does not wrap).
    pub rtp_time: u64,
    /// Ticks per second of `rtp_time`.
    pub clock_rate: u64,
    /// When it arrived.
    pub arrived: Instant,
    /// A VP8 keyframe.
    pub keyframe: bool,
    /// The encoded frame.
    pub data: &'a [u8],
}

/// Where a track's timestamps start: its first frame's RTP time and the
/// file time (ns) it arrived at.
#[derive(Debug, Clone, Copy)]
struct Anchor {
    rtp: u64,
    at_ns: u64,
}

/// A WebM file being written.
pub struct WebmFile {
    segment: Segment<BufWriter<File>>,
    video: Option<VideoTrack>,
    audio: Option<AudioTrack>,
    path: PathBuf,
    /// Arrival of the first frame: time zero of the file.
    origin: Instant,
    anchors: HashMap<FrameKind, Anchor>,
    /// The latest timestamp written, on any track.
    last_ns: u64,
    seen_keyframe: bool,
    frames: u64,
}

/// Reads the frame size from a VP8 keyframe's header (RFC 6386, 9.1): a
/// 3-byte frame tag, the start code `9d 01 2a`, then width and height in
/// 14 bits each.
pub fn vp8_keyframe_size(data: &[u8]) -> Option<(u32, u32)> {
    if data.len() < 10 || data[0] & 1 != 0 || data[3..6] != [0x9d, 0x01, 0x2a] {
        return None;
    }
    let width = u32::from(u16::from_le_bytes([data[6], data[7]]) & 0x3fff);
    let height = u32::from(u16::from_le_bytes([data[8], data[9]]) & 0x3fff);
    (width > 0 && height > 0).then_some((width, height))
}

/// The `OpusHead` block Matroska wants as an Opus track's codec private data
/// (RFC 7845, 5.1): version 1, two channels (as WebRTC negotiates Opus), no
/// pre-skip, 48 kHz, no gain, mapping family 0.
fn opus_head() -> [u8; 19] {
    let mut head = [0u8; 19];
    head[..8].copy_from_slice(b"OpusHead");
    head[8] = 1;
    head[9] = 2;
    head[12..16].copy_from_slice(&48_000u32.to_le_bytes());
    head
}

fn mux_error(what: &str, e: impl std::fmt::Debug) -> std::io::Error {
    std::io::Error::other(format!("webm: {what}: {e:?}"))
}

impl WebmFile {
    /// Starts a file at `path` with a VP8 track of `size` (the first
    /// keyframe's; none for sound alone) and, when `with_audio`, an Opus
    /// track. `origin` is time zero. (libwebm holds sound back until the
    /// picture catches up, so a file with a picture track must get pictures:
    /// sound alone goes into a file without one.)
    pub fn create(path: &Path, size: Option<(u32, u32)>, with_audio: bool, origin: Instant) -> std::io::Result<Self> {
        let file = File::create(path)?;
        let builder = SegmentBuilder::new(Writer::new(BufWriter::new(file)))
            .and_then(|b| b.set_mode(SegmentMode::File))
            .and_then(|b| b.set_writing_app("Rapport"))
            .map_err(|e| mux_error("segment", e))?;
        let (builder, video) = match size {
            Some((width, height)) => {
                let (builder, video) = builder
                    .add_video_track(width, height, VideoCodecId::VP8, None)
                    .map_err(|e| mux_error("video track", e))?;
                (builder, Some(video))
            }
            None => (builder, None),
        };
        let (builder, audio) = if with_audio {
            let (builder, audio) = builder
                .add_audio_track(48_000, 2, AudioCodecId::Opus, None)
                .map_err(|e| mux_error("audio track", e))?;
            let builder = builder
                .set_codec_private(audio, &opus_head())
                .map_err(|e| mux_error("opus head", e))?;
            (builder, Some(audio))
        } else {
            (builder, None)
        };
        Ok(WebmFile {
            segment: builder.build(),
            video,
            audio,
            path: path.to_path_buf(),
            origin,
            anchors: HashMap::new(),
            last_ns: 0,
            seen_keyframe: false,
            frames: 0,
        })
    }

    /// Writes one frame; video before the first keyframe (or in a file of
    /// sound alone), and sound for a file without a sound track, are skipped.
    pub fn write(&mut self, frame: Frame<'_>) -> std::io::Result<()> {
        let track: u64 = match frame.kind {
            FrameKind::Video => {
                let Some(video) = self.video else { return Ok(()) };
                self.seen_keyframe |= frame.keyframe;
                if !self.seen_keyframe {
                    return Ok(());
                }
                video.into()
            }
            FrameKind::Audio => match self.audio {
                Some(audio) => audio.into(),
                None => return Ok(()),
            },
        };
        let arrived_ns =
            u64::try_from(frame.arrived.saturating_duration_since(self.origin).as_nanos()).unwrap_or(u64::MAX);
        let clock = frame.clock_rate.max(1);
        let anchor = *self.anchors.entry(frame.kind).or_insert(Anchor {
            rtp: frame.rtp_time,
            at_ns: arrived_ns,
        });
        let mut ns = frame
            .rtp_time
            .checked_sub(anchor.rtp)
            .map(|ticks| anchor.at_ns + ticks.saturating_mul(1_000_000_000) / clock);
        if ns.is_none_or(|ns| ns.abs_diff(arrived_ns) > REANCHOR_NS) {
            self.anchors.insert(
                frame.kind,
                Anchor {
                    rtp: frame.rtp_time,
                    at_ns: arrived_ns,
                },
            );
            ns = Some(arrived_ns);
        }
        // Never backwards across tracks: a new cluster starts at a keyframe's
        // time, and a frame before it could not be placed.
        let ns = ns.unwrap_or(arrived_ns).max(self.last_ns);
        self.segment
            .add_frame(track, frame.data, ns, frame.kind == FrameKind::Audio || frame.keyframe)
            .map_err(|e| mux_error("frame", e))?;
        self.last_ns = ns;
        self.frames += 1;
        Ok(())
    }

    /// Writes no more video until the next keyframe (frames were lost, so
    /// what follows could not be decoded).
    pub fn wait_for_keyframe(&mut self) {
        self.seen_keyframe = false;
    }

    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Deletes the file unfinished (nothing was written to it).
    pub fn discard(self) {
        let path = self.path.clone();
        drop(self);
        let _ = std::fs::remove_file(path);
    }

    /// Finishes the file (cues, duration) and returns its path.
    pub fn finish(self) -> std::io::Result<PathBuf> {
        let writer = self
            .segment
            .finalize(None)
            .map_err(|_| std::io::Error::other("webm: cannot finalize the file"))?;
        let mut file = writer.into_inner();
        std::io::Write::flush(&mut file)?;
        Ok(self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A VP8 keyframe header of `w`×`h` followed by filler: enough for the
    /// container, which does not decode.
    fn keyframe(w: u16, h: u16) -> Vec<u8> {
        let mut data = vec![0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a];
        data.extend_from_slice(&w.to_le_bytes());
        data.extend_from_slice(&h.to_le_bytes());
        data.extend(std::iter::repeat_n(0xab, 200));
        data
    }

    #[test]
    fn reads_the_size_of_a_vp8_keyframe_only() {
        assert_eq!(vp8_keyframe_size(&keyframe(640, 360)), Some((640, 360)));
        let mut inter = keyframe(640, 360);
        inter[0] |= 1;
        assert_eq!(vp8_keyframe_size(&inter), None);
        assert_eq!(vp8_keyframe_size(&[0; 4]), None);
    }

    #[test]
    fn a_file_of_video_and_sound_parses_with_its_tracks_and_duration() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("call.webm");
        let origin = Instant::now();
        let mut file = WebmFile::create(&path, Some((640, 360)), true, origin).unwrap();
        // Three seconds: video at 30 fps (a keyframe each second, after an
        // inter frame that must be skipped), sound every 20 ms.
        let inter = vec![0x11; 100];
        file.write(Frame {
            kind: FrameKind::Video,
            rtp_time: 1_000,
            clock_rate: 90_000,
            arrived: origin,
            keyframe: false,
            data: &inter,
        })
        .unwrap();
        for ms in (0..3000u64).step_by(10) {
            let arrived = origin + Duration::from_millis(ms);
            if ms % 20 == 0 {
                file.write(Frame {
                    kind: FrameKind::Audio,
                    rtp_time: 5_000 + ms * 48,
                    clock_rate: 48_000,
                    arrived,
                    keyframe: false,
                    data: &[0xfc, 1, 2, 3],
                })
                .unwrap();
            }
            if ms % 30 == 0 {
                let key = ms % 1000 == 0;
                let data = if key { keyframe(640, 360) } else { inter.clone() };
                file.write(Frame {
                    kind: FrameKind::Video,
                    rtp_time: 1_000 + ms * 90,
                    clock_rate: 90_000,
                    arrived,
                    keyframe: key,
                    data: &data,
                })
                .unwrap();
            }
        }
        assert_eq!(file.frames(), 150 + 100);
        let path = file.finish().unwrap();

        let mkv = matroska_demuxer::MatroskaFile::open(std::fs::File::open(&path).unwrap()).unwrap();
        let tracks = mkv.tracks();
        assert_eq!(tracks.len(), 2);
        let video = tracks.iter().find(|t| t.codec_id() == "V_VP8").expect("a VP8 track");
        let v = video.video().expect("video settings");
        assert_eq!((v.pixel_width().get(), v.pixel_height().get()), (640, 360));
        let video_track = video.track_number().get();
        let audio = tracks.iter().find(|t| t.codec_id() == "A_OPUS").expect("an Opus track");
        assert_eq!(&audio.codec_private().expect("OpusHead")[..8], b"OpusHead");
        // Duration in the file's timestamp scale (ns per tick).
        let scale = mkv.info().timestamp_scale().get() as f64;
        let seconds = mkv.info().duration().expect("a duration") * scale / 1e9;
        assert!((2.9..=3.1).contains(&seconds), "duration {seconds} s");

        let mut mkv = mkv;
        let mut frame = matroska_demuxer::Frame::default();
        let (mut video_frames, mut audio_frames, mut last) = (0, 0, 0);
        while mkv.next_frame(&mut frame).unwrap() {
            assert!(frame.timestamp >= last, "timestamps never go back");
            last = frame.timestamp;
            if frame.track == video_track {
                video_frames += 1;
            } else {
                audio_frames += 1;
            }
        }
        assert_eq!((video_frames, audio_frames), (100, 150));
    }

    #[test]
    fn sound_alone_makes_a_file_of_one_opus_track() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sound.webm");
        let origin = Instant::now();
        let mut file = WebmFile::create(&path, None, true, origin).unwrap();
        // Forty seconds of sound: longer than one cluster may span.
        for ms in (0..40_000u64).step_by(20) {
            file.write(Frame {
                kind: FrameKind::Audio,
                rtp_time: ms * 48,
                clock_rate: 48_000,
                arrived: origin + Duration::from_millis(ms),
                keyframe: false,
                data: &[0xfc, 1, 2, 3],
            })
            .unwrap();
        }
        assert_eq!(file.frames(), 2000);
        let path = file.finish().unwrap();
        let mut mkv = matroska_demuxer::MatroskaFile::open(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(mkv.tracks().len(), 1);
        assert_eq!(mkv.tracks()[0].codec_id(), "A_OPUS");
        let scale = mkv.info().timestamp_scale().get() as f64;
        let seconds = mkv.info().duration().unwrap() * scale / 1e9;
        assert!((39.9..=40.1).contains(&seconds), "duration {seconds} s");
        let mut frame = matroska_demuxer::Frame::default();
        let mut frames = 0;
        while mkv.next_frame(&mut frame).unwrap() {
            frames += 1;
        }
        assert_eq!(frames, 2000, "no sound is lost");
    }
}
