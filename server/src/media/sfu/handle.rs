//! The SFU's face: its configuration, what it says to a client, and the
//! cheap handle through which the HTTP and WebSocket layer commands the loop
//! (`super`), which owns every peer.

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;
use str0m::format::Codec;
use str0m::media::{MediaKind, MediaTime, Mid};
use tokio::sync::mpsc;

/// Configuration of the media server.
#[derive(Clone)]
pub struct SfuConfig {
    /// Where the single UDP socket binds, e.g. `0.0.0.0:40000` in production, `127.0.0.1:0` in tests.
    pub bind_addr: SocketAddr,
    /// Address announced in the ICE host candidate. `None` = the bound address. A port of 0 is
    /// replaced by the bound port. Must be a concrete IP (str0m rejects 0.0.0.0 candidates).
    pub announce_addr: Option<SocketAddr>,
    /// Peers that do not reach ICE `Connected` within this time are dropped.
    pub connect_timeout: Duration,
    /// How long ICE may stay `Disconnected` (it can recover) before the peer is dropped.
    pub disconnect_grace: Duration,
    /// Optional tap handed every incoming frame (for recording). It must not block: a slow
    /// recorder must never stall forwarding.
    pub media_tap: Option<MediaTap>,
}

/// Where the SFU hands incoming frames (the recorder).
pub type MediaTap = Arc<dyn Fn(TapFrame) + Send + Sync>;

impl fmt::Debug for SfuConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SfuConfig")
            .field("bind_addr", &self.bind_addr)
            .field("announce_addr", &self.announce_addr)
            .field("connect_timeout", &self.connect_timeout)
            .field("disconnect_grace", &self.disconnect_grace)
            .field("media_tap", &self.media_tap.is_some())
            .finish()
    }
}

impl SfuConfig {
    /// Sensible defaults around a bind address.
    pub fn new(bind_addr: SocketAddr) -> Self {
        SfuConfig {
            bind_addr,
            announce_addr: None,
            connect_timeout: Duration::from_secs(30),
            disconnect_grace: Duration::from_secs(8),
            media_tap: None,
        }
    }
}

/// Messages for the browser, in the order they must be delivered.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SignalOut {
    /// Answer to the client's join offer or re-offer.
    Answer {
        sdp: String,
    },
    /// Server-initiated renegotiation. `tracks` is the complete mid → participant table that is
    /// valid once this offer is applied (set it *before* `setRemoteDescription`, `ontrack` fires inside).
    Offer {
        negotiation_id: u64,
        sdp: String,
        tracks: Vec<RemoteTrack>,
    },
    /// A forwarded track started/stopped carrying media (camera off, screen share stopped, ...).
    TrackState {
        mid: String,
        paused: bool,
    },
    /// The participant was removed (host action, replaced by a newer session, connection lost).
    Removed {
        reason: String,
    },
    Error {
        message: String,
    },
}

/// One track the server sends to a client.
#[derive(Debug, Clone, Serialize)]
pub struct RemoteTrack {
    pub mid: String,
    pub participant: String,
    pub kind: &'static str,
    /// "mic" | "camera" | "screen" (as announced by the sender).
    pub source: String,
    pub paused: bool,
}

/// Read-only description of an incoming track, shared with the recorder tap.
#[derive(Debug)]
pub struct TrackInfo {
    pub room: Arc<str>,
    pub participant: Arc<str>,
    pub source: Arc<str>,
    pub kind: MediaKind,
    /// Mid on the *sender's* peer connection.
    pub mid: Mid,
}

/// One depacketised incoming frame, for recording (WebM muxing needs exactly these fields).
#[derive(Debug, Clone)]
pub struct TapFrame {
    pub track: Arc<TrackInfo>,
    pub codec: Codec,
    /// RTP clock rate: 90_000 for VP8, 48_000 for Opus.
    pub clock_rate: u32,
    /// 64-bit extended RTP time in `clock_rate` units (random origin per stream).
    pub rtp_time: MediaTime,
    /// Arrival time; use it to align audio and video of one participant.
    pub network_time: Instant,
    pub keyframe: bool,
    /// False if packets were lost before this frame (start a new cluster at the next keyframe).
    pub contiguous: bool,
    pub data: Arc<[u8]>,
}

/// Identifies one media session (one WebSocket / one RTCPeerConnection). Commands carry this
/// rather than the participant id so a late `leave` from an old tab cannot kill a newer session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerKey(pub(super) u64);

#[derive(Debug)]
pub enum SfuError {
    /// The SFU task has stopped.
    Stopped,
}

impl fmt::Display for SfuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("media server stopped")
    }
}

impl std::error::Error for SfuError {}

/// A participant joining, with its offer.
pub(super) struct Joining {
    pub(super) key: PeerKey,
    pub(super) room: String,
    pub(super) participant: String,
    pub(super) offer_sdp: String,
    pub(super) sources: HashMap<String, String>,
    /// Most video tracks of this participant forwarded (camera, and screen when allowed).
    pub(super) max_video: usize,
    pub(super) signal: mpsc::UnboundedSender<SignalOut>,
}

/// What the handle asks of the loop.
pub(super) enum Command {
    Join(Joining),
    Answer {
        key: PeerKey,
        negotiation_id: u64,
        sdp: String,
    },
    Offer {
        key: PeerKey,
        sdp: String,
        sources: HashMap<String, String>,
    },
    Leave {
        key: PeerKey,
    },
    Remove {
        room: String,
        participant: String,
        reason: String,
    },
    /// Ask every video sender of the room for a keyframe (a recording starts).
    RequestKeyframes {
        room: String,
    },
}

/// Cheap, cloneable handle used by the HTTP/WebSocket layer.
#[derive(Clone)]
pub struct SfuHandle {
    pub(super) tx: mpsc::Sender<Command>,
    pub(super) local_addr: SocketAddr,
    pub(super) announce_addr: SocketAddr,
}

impl SfuHandle {
    /// Address the UDP socket is bound to (useful when binding port 0 in tests).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Address put into ICE candidates.
    pub fn announce_addr(&self) -> SocketAddr {
        self.announce_addr
    }

    /// Joins `participant` to `room` with the browser's offer. The answer (or an error) and all
    /// later server messages arrive on `signal`. A previous session of the same participant in
    /// the same room is replaced. Of the video tracks it sends, at most `max_video` are
    /// forwarded (1: the camera; 2: the camera and a shared screen), whatever it calls them.
    pub async fn join(
        &self,
        room: &str,
        participant: &str,
        offer_sdp: String,
        sources: HashMap<String, String>,
        max_video: usize,
        signal: mpsc::UnboundedSender<SignalOut>,
    ) -> Result<PeerKey, SfuError> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let key = PeerKey(NEXT.fetch_add(1, Ordering::Relaxed));
        let cmd = Command::Join(Joining {
            key,
            room: room.to_owned(),
            participant: participant.to_owned(),
            offer_sdp,
            sources,
            max_video,
            signal,
        });
        self.send(cmd).await.map(|()| key)
    }

    /// The client's answer to a server offer.
    pub async fn answer(&self, key: PeerKey, negotiation_id: u64, sdp: String) -> Result<(), SfuError> {
        self.send(Command::Answer {
            key,
            negotiation_id,
            sdp,
        })
        .await
    }

    /// A client-initiated re-offer (e.g. a screen share added as a new transceiver).
    pub async fn offer(&self, key: PeerKey, sdp: String, sources: HashMap<String, String>) -> Result<(), SfuError> {
        self.send(Command::Offer { key, sdp, sources }).await
    }

    /// The WebSocket closed or the client said goodbye.
    pub async fn leave(&self, key: PeerKey) -> Result<(), SfuError> {
        self.send(Command::Leave { key }).await
    }

    /// Host removes a participant; its client receives `removed` and its tracks disappear for others.
    pub async fn remove_participant(&self, room: &str, participant: &str, reason: &str) -> Result<(), SfuError> {
        let cmd = Command::Remove {
            room: room.to_owned(),
            participant: participant.to_owned(),
            reason: reason.to_owned(),
        };
        self.send(cmd).await
    }

    /// Asks every camera and screen of `room` for a keyframe, so that a
    /// recording starting now has a picture at once. Best effort: dropped when
    /// the SFU is busy.
    pub fn request_keyframes(&self, room: &str) {
        let _ = self.tx.try_send(Command::RequestKeyframes { room: room.to_owned() });
    }

    async fn send(&self, cmd: Command) -> Result<(), SfuError> {
        self.tx.send(cmd).await.map_err(|_| SfuError::Stopped)
    }
}
