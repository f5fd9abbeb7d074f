//! In-process SFU (selective forwarding unit) for appointment video calls.
//!
//! A tokio adaptation of str0m 0.24.1 `examples/chat.rs`: every browser has exactly one
//! `RTCPeerConnection` with the server, all media of all rooms goes through ONE UDP socket,
//! and signalling (SDP offers/answers as JSON) travels over the application's WebSocket.
//!
//! # Design: one task owns every `Rtc`
//!
//! A single task owns the socket and all `Rtc`s of all rooms. Reasons:
//! * Demultiplexing one UDP port needs `Rtc::accepts` over *all* peers anyway (a STUN packet from
//!   a new address can only be attributed by checking each peer's ICE credentials), so a
//!   per-room dispatcher would have to re-implement str0m's ICE matching.
//! * Forwarding is synchronous, lock-free and allocation-light: `MediaData` is not `Clone`, but
//!   inside one task it is handed to every receiver by reference and its payload is an `Arc<[u8]>`.
//! * Appointment rooms are small and the host has 2 cores; one core for all media is plenty.
//!   If it ever is not, split by room with a dispatcher keyed on STUN USERNAME and source address.
//!
//! # Signalling protocol (the SFU's part; `super::signal` carries it over JSON)
//! 1. Client creates an offer with sendonly transceivers (mic, camera, screen) and sends
//!    `join {sdp, sources: {mid: "mic"|"camera"|"screen"}}`.
//! 2. Server replies `answer {sdp}`, then (same ordered stream) `offer {negotiation_id, sdp, tracks}`
//!    whenever other participants' tracks must be added/removed; client replies
//!    `answer {negotiation_id, sdp}`. `tracks` maps each server-sent mid to a participant.
//! 3. Optional client re-offer (`offer {sdp, sources}`), answered with `answer {sdp}`. On glare the
//!    server yields (str0m's `accept_offer` rolls back our pending offer) and re-offers later; the
//!    client must ignore server offers while it has its own offer outstanding.
//!
//! Everything the server says to one client goes through ONE unbounded channel, so the WebSocket
//! writer forwards answers and offers in the order they were produced (a separate oneshot for the
//! answer could overtake a queued offer and break the offer/answer state machine).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde::Serialize;
use str0m::change::{SdpAnswer, SdpOffer, SdpPendingOffer};
use str0m::format::Codec;
use str0m::media::{Direction, KeyframeRequestKind, MediaData, MediaKind, MediaTime, Mid};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tracing::{debug, info, trace, warn};

/// Minimum spacing between keyframe requests we send to one source track: every viewer's PLI
/// would otherwise turn into a keyframe storm at the sender.
const KEYFRAME_THROTTLE: Duration = Duration::from_secs(1);
/// A server offer unanswered for this long means the client is broken or gone. We evict instead of
/// re-offering: a slow client may still apply the old offer, and a re-offer with different
/// m-lines would then desynchronise the two sides for good. The client rejoins from scratch.
const NEGOTIATION_TIMEOUT: Duration = Duration::from_secs(15);
/// Upper bound on how long the loop sleeps, so housekeeping (timeouts, reaping) runs regularly.
const MAX_SLEEP: Duration = Duration::from_millis(500);

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
pub struct PeerKey(u64);

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
struct Joining {
    key: PeerKey,
    room: String,
    participant: String,
    offer_sdp: String,
    sources: HashMap<String, String>,
    /// Most video tracks of this participant forwarded (camera, and screen when allowed).
    max_video: usize,
    signal: mpsc::UnboundedSender<SignalOut>,
}

enum Command {
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
    tx: mpsc::Sender<Command>,
    local_addr: SocketAddr,
    announce_addr: SocketAddr,
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

/// Binds the UDP socket and spawns the SFU task.
pub async fn start(config: SfuConfig) -> io::Result<(SfuHandle, tokio::task::JoinHandle<()>)> {
    let socket = UdpSocket::bind(config.bind_addr).await?;
    let local_addr = socket.local_addr()?;
    let announce_addr = match config.announce_addr {
        Some(a) if a.port() == 0 => SocketAddr::new(a.ip(), local_addr.port()),
        Some(a) => a,
        None => local_addr,
    };
    // Fail at startup, not at the first join: str0m refuses unspecified/link-local candidates.
    Candidate::host(announce_addr, "udp").map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot announce {announce_addr}: {e}"),
        )
    })?;
    info!(%local_addr, %announce_addr, "media server listening");

    let (tx, rx) = mpsc::channel(256);
    let sfu = Sfu {
        socket,
        announce_addr,
        config,
        peers: Vec::new(),
        queue: VecDeque::new(),
    };
    // The loop is an ordinary task: `Rtc` is `Send` (str0m has no `Rc`/`RefCell`), and the
    // pending offers and media it holds are owned data and `Arc`s.
    let task = tokio::spawn(sfu.run(rx));
    Ok((
        SfuHandle {
            tx,
            local_addr,
            announce_addr,
        },
        task,
    ))
}

struct Sfu {
    socket: UdpSocket,
    announce_addr: SocketAddr,
    config: SfuConfig,
    peers: Vec<Peer>,
    /// Work produced while draining one `Rtc` that touches *other* `Rtc`s. Processed item by item
    /// so that every touched `Rtc` is drained right after its mutation (str0m's invariant).
    queue: VecDeque<Propagated>,
}

/// An incoming track. Its origin peer holds the only strong `Arc`; receivers hold `Weak`s, so
/// dropping the origin automatically turns every forwarded copy into "to stop".
struct TrackIn {
    origin: PeerKey,
    info: Arc<TrackInfo>,
    paused: AtomicBool,
}

struct TrackInEntry {
    track: Arc<TrackIn>,
    last_keyframe_request: Option<Instant>,
}

/// A track forwarded to this peer and the state of its m-line (same states as chat.rs).
struct TrackOut {
    track_in: Weak<TrackIn>,
    state: TrackOutState,
    /// Whether the offer that negotiates the m-line told the viewer the track is
    /// paused. A pause change while the viewer has not answered yet reaches no
    /// open m-line and is not sent, so the answer compares this with the track's
    /// state then and sends the difference (see [`open_negotiated`]).
    offered_paused: Option<bool>,
}

impl TrackOut {
    fn to_open(track: &Arc<TrackIn>) -> Self {
        TrackOut {
            track_in: Arc::downgrade(track),
            state: TrackOutState::ToOpen,
            offered_paused: None,
        }
    }
}

/// Opens every m-line of `tracks_out` that the viewer's answer accepted.
/// Returns the `TrackState` messages the viewer still needs (tracks whose pause
/// changed after the offer described them: without them a screen that stopped
/// while the viewer answered would stay shown, empty, for the rest of the call),
/// and the video tracks that now need a keyframe.
fn open_negotiated(tracks_out: &mut [TrackOut]) -> (Vec<SignalOut>, Vec<Arc<TrackIn>>) {
    let mut states = Vec::new();
    let mut videos = Vec::new();
    for t in tracks_out {
        let TrackOutState::Negotiating(mid) = t.state else {
            continue;
        };
        t.state = TrackOutState::Open(mid);
        let Some(track) = t.track_in.upgrade() else {
            continue;
        };
        let paused = track.paused.load(Ordering::Relaxed);
        if t.offered_paused != Some(paused) {
            states.push(SignalOut::TrackState {
                mid: mid.to_string(),
                paused,
            });
        }
        if track.info.kind == MediaKind::Video {
            videos.push(track);
        }
    }
    (states, videos)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TrackOutState {
    ToOpen,
    Negotiating(Mid),
    Open(Mid),
    ToStop(Mid),
    NegotiatingStop(Mid),
}

struct PendingOffer {
    id: u64,
    offer: SdpPendingOffer,
    sent_at: Instant,
}

struct Peer {
    key: PeerKey,
    room: Arc<str>,
    participant: Arc<str>,
    rtc: Rtc,
    signal: mpsc::UnboundedSender<SignalOut>,
    /// Client mid (as string) → "mic" | "camera" | "screen".
    sources: HashMap<String, String>,
    /// Most video tracks of this peer forwarded to the others.
    max_video: usize,
    tracks_in: Vec<TrackInEntry>,
    tracks_out: Vec<TrackOut>,
    pending: Option<PendingOffer>,
    negotiation_seq: u64,
    /// Last `Output::Timeout`; the peer gets `Input::Timeout` only when this is due.
    next_timeout: Instant,
    created: Instant,
    /// ICE connected (may drop to Disconnected and come back).
    connected: bool,
    /// ICE + DTLS up (`Event::Connected`). Server offers wait for this, like chat.rs waits for
    /// its data channel: re-offering on a session that never connected is untested territory.
    media_ready: bool,
    disconnected_since: Option<Instant>,
    /// Set when the peer must go; the reaper closes and drops it.
    remove: Option<String>,
}

// Media frames are the common case and move through a short queue once: boxing
// them would allocate per frame to save a few hundred bytes of queue slots.
#[allow(clippy::large_enum_variant)]
enum Propagated {
    /// A new incoming track: offer it to the other peers of the room.
    TrackOpen(Arc<TrackIn>),
    MediaData(Arc<TrackIn>, MediaData),
    /// Ask the origin of this track for a keyframe.
    KeyframeRequest(Arc<TrackIn>, KeyframeRequestKind),
    Paused(Arc<TrackIn>, bool),
}

impl Sfu {
    async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        let mut buf = vec![0u8; 2000];
        loop {
            let now = Instant::now();
            let deadline = self
                .peers
                .iter()
                .map(|p| p.next_timeout)
                .fold(now + MAX_SLEEP, Instant::min)
                // Never sleep 0: a timeout str0m keeps reporting as due must not spin the loop
                // (chat.rs clamps its socket read timeout the same way).
                .max(now + Duration::from_millis(1));

            // recv_from and mpsc::recv are cancel-safe, so losing the race in select! loses nothing.
            // Handlers may take &mut self although the futures borrow self.socket and buf: select!
            // drops the futures before running the handler (tokio 1.54.1 macros/select.rs keeps
            // them in an inner block, `let mut output = { let mut futures = ...; }; match output`).
            tokio::select! {
                res = self.socket.recv_from(&mut buf) => match res {
                    Ok((n, source)) => self.handle_datagram(&buf[..n], source),
                    // Linux reports nothing for unconnected UDP; other errors are transient.
                    Err(e) => debug!(error = %e, "udp recv failed"),
                },
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle_command(cmd),
                    None => break, // every handle dropped: server shutting down
                },
                _ = tokio::time::sleep_until(tokio::time::Instant::from_std(deadline)) => {}
            }

            self.handle_timeouts(Instant::now());
            self.process_queue();
            self.housekeeping(Instant::now());
        }
        for peer in &mut self.peers {
            let _ = peer.signal.send(SignalOut::Removed {
                reason: "server shutting down".into(),
            });
            close_peer(peer, &self.socket);
        }
    }

    fn handle_datagram(&mut self, data: &[u8], source: SocketAddr) {
        // destination = announced address, not socket.local_addr(): str0m's ICE agent only answers
        // STUN whose destination equals one of our candidates (matters with 0.0.0.0 binds / NAT).
        let receive = match Receive::new(Protocol::Udp, source, self.announce_addr, data) {
            Ok(r) => r,
            Err(e) => {
                trace!(%source, error = ?e, "not a WebRTC datagram");
                return;
            }
        };
        let input = Input::Receive(Instant::now(), receive);
        // Linear scan like chat.rs: `accepts` is a socket-address compare for established peers;
        // only STUN from unknown addresses costs an ICE credential check per peer.
        let Some(peer) = self
            .peers
            .iter_mut()
            .find(|p| p.remove.is_none() && p.rtc.accepts(&input))
        else {
            // Common right after join: the browser's first STUN can beat the Join command.
            trace!(%source, "no peer accepts datagram");
            return;
        };
        if let Err(e) = peer.rtc.handle_input(input) {
            warn!(participant = %peer.participant, error = ?e, "rtc input failed");
            peer.evict("connection error");
            return;
        }
        drain(peer, &self.socket, &mut self.queue, self.config.media_tap.as_ref());
    }

    fn handle_timeouts(&mut self, now: Instant) {
        for peer in self
            .peers
            .iter_mut()
            .filter(|p| p.remove.is_none() && p.next_timeout <= now)
        {
            if let Err(e) = peer.rtc.handle_input(Input::Timeout(now)) {
                warn!(participant = %peer.participant, error = ?e, "rtc timeout failed");
                peer.evict("connection error");
                continue;
            }
            drain(peer, &self.socket, &mut self.queue, self.config.media_tap.as_ref());
        }
    }

    fn handle_command(&mut self, cmd: Command) {
        match cmd {
            Command::Join(joining) => self.join(joining),
            Command::Answer {
                key,
                negotiation_id,
                sdp,
            } => {
                if let Some(peer) = self.peers.iter_mut().find(|p| p.key == key) {
                    peer.handle_answer(negotiation_id, &sdp, &mut self.queue);
                    drain(peer, &self.socket, &mut self.queue, self.config.media_tap.as_ref());
                }
            }
            Command::Offer { key, sdp, sources } => {
                if let Some(peer) = self.peers.iter_mut().find(|p| p.key == key) {
                    peer.handle_client_offer(&sdp, sources);
                    drain(peer, &self.socket, &mut self.queue, self.config.media_tap.as_ref());
                }
            }
            Command::Leave { key } => {
                if let Some(peer) = self.peers.iter_mut().find(|p| p.key == key) {
                    peer.mark_removed("left");
                }
            }
            Command::Remove {
                room,
                participant,
                reason,
            } => {
                for peer in self
                    .peers
                    .iter_mut()
                    .filter(|p| *p.room == *room && *p.participant == *participant)
                {
                    peer.evict(&reason);
                }
            }
            Command::RequestKeyframes { room } => {
                // Through the queue, so that each sender is drained after its request.
                let tracks: Vec<Arc<TrackIn>> = self
                    .peers
                    .iter()
                    .filter(|p| *p.room == *room)
                    .flat_map(|p| p.tracks_in.iter().map(|t| t.track.clone()))
                    .filter(|t| t.info.kind == MediaKind::Video)
                    .collect();
                for track in tracks {
                    self.queue
                        .push_back(Propagated::KeyframeRequest(track, KeyframeRequestKind::Fir));
                }
            }
        }
    }

    fn join(&mut self, joining: Joining) {
        let Joining {
            key,
            room,
            participant,
            offer_sdp,
            sources,
            max_video,
            signal,
        } = joining;
        // One media session per participant: a reload or second tab replaces the old one.
        for old in self
            .peers
            .iter_mut()
            .filter(|p| *p.room == *room && *p.participant == *participant)
        {
            old.evict("replaced by a newer session");
        }

        let offer = match SdpOffer::from_sdp_string(&offer_sdp) {
            Ok(o) => o,
            Err(e) => {
                let _ = signal.send(SignalOut::Error {
                    message: format!("bad offer: {e}"),
                });
                return;
            }
        };
        let now = Instant::now();
        // VP8 + Opus only: every peer then has identical codec sets, so forwarding never needs
        // transcoding and `match_params` always finds a PT. Frame mode (no rtp_mode) lets str0m
        // handle NACK/RTX and jitter per receiver.
        let mut rtc = Rtc::builder()
            .clear_codecs()
            .enable_opus(true, false)
            .enable_vp8(true)
            .build(now);
        let candidate = Candidate::host(self.announce_addr, "udp").expect("checked in start()");
        rtc.add_local_candidate(candidate);
        let answer: SdpAnswer = match rtc.sdp_api().accept_offer(offer) {
            Ok(a) => a,
            Err(e) => {
                let _ = signal.send(SignalOut::Error {
                    message: format!("offer rejected: {e}"),
                });
                return;
            }
        };
        let _ = signal.send(SignalOut::Answer {
            sdp: answer.to_sdp_string(),
        });
        info!(%room, %participant, "participant joined media");

        let room: Arc<str> = room.into();
        let mut peer = Peer {
            key,
            room: room.clone(),
            participant: participant.into(),
            rtc,
            signal,
            sources,
            max_video,
            tracks_in: Vec::new(),
            tracks_out: Vec::new(),
            pending: None,
            negotiation_seq: 0,
            next_timeout: now,
            created: now,
            connected: false,
            media_ready: false,
            disconnected_since: None,
            remove: None,
        };
        // Everything the room already publishes is offered to the newcomer once it is connected;
        // the offer follows the answer on the same ordered channel.
        for other in self.peers.iter().filter(|p| p.room == room && p.remove.is_none()) {
            for t in &other.tracks_in {
                peer.tracks_out.push(TrackOut::to_open(&t.track));
            }
        }
        self.peers.push(peer);
        let peer = self.peers.last_mut().expect("just pushed");
        // Draining emits MediaAdded for the newcomer's own tracks (→ TrackOpen for the others).
        drain(peer, &self.socket, &mut self.queue, self.config.media_tap.as_ref());
    }

    /// Applies queued cross-peer work. Each item mutates each target `Rtc` at most once and the
    /// target is drained immediately after, which may enqueue more work.
    fn process_queue(&mut self) {
        let tap = self.config.media_tap.as_ref();
        while let Some(item) = self.queue.pop_front() {
            match item {
                Propagated::TrackOpen(track) => {
                    for peer in self.peers.iter_mut().filter(|p| p.receives_from(&track)) {
                        peer.tracks_out.push(TrackOut::to_open(&track));
                        drain(peer, &self.socket, &mut self.queue, tap); // negotiates
                    }
                }
                Propagated::MediaData(track, data) => {
                    for peer in self.peers.iter_mut().filter(|p| p.receives_from(&track)) {
                        if peer.forward(&track, &data) {
                            drain(peer, &self.socket, &mut self.queue, tap);
                        }
                    }
                }
                Propagated::KeyframeRequest(track, kind) => {
                    if let Some(origin) = self.peers.iter_mut().find(|p| p.key == track.origin) {
                        if origin.request_keyframe(&track, kind, Instant::now()) {
                            drain(origin, &self.socket, &mut self.queue, tap);
                        }
                    }
                }
                Propagated::Paused(track, paused) => {
                    for peer in self.peers.iter_mut().filter(|p| p.receives_from(&track)) {
                        if let Some(mid) = peer.open_mid_for(&track) {
                            let _ = peer.signal.send(SignalOut::TrackState {
                                mid: mid.to_string(),
                                paused,
                            });
                        }
                    }
                }
            }
        }
    }

    /// ICE/connect timeouts, stuck negotiations, and removal of dead or removed peers.
    fn housekeeping(&mut self, now: Instant) {
        let tap = self.config.media_tap.as_ref();
        for peer in &mut self.peers {
            if peer.remove.is_some() {
                continue;
            }
            if !peer.rtc.is_alive() {
                peer.evict("connection closed");
            } else if !peer.connected && now.duration_since(peer.created) > self.config.connect_timeout {
                peer.evict("could not connect");
            } else if peer
                .disconnected_since
                .is_some_and(|t| now.duration_since(t) > self.config.disconnect_grace)
            {
                peer.evict("connection lost");
            } else if peer
                .pending
                .as_ref()
                .is_some_and(|p| now.duration_since(p.sent_at) > NEGOTIATION_TIMEOUT)
            {
                peer.evict("negotiation timed out");
            }
        }

        if self.peers.iter().all(|p| p.remove.is_none()) {
            return;
        }
        let (gone, kept): (Vec<Peer>, Vec<Peer>) = std::mem::take(&mut self.peers)
            .into_iter()
            .partition(|p| p.remove.is_some());
        self.peers = kept;
        let mut rooms: Vec<Arc<str>> = Vec::new();
        for mut peer in gone {
            info!(room = %peer.room, participant = %peer.participant,
                  reason = peer.remove.as_deref().unwrap_or(""), "participant left media");
            close_peer(&mut peer, &self.socket);
            rooms.push(peer.room.clone());
            // Dropping `peer` drops its Arc<TrackIn>s: the Weak refs held by others go dead.
        }
        // Those peers now renegotiate (Open → ToStop → stop_media) during drain.
        for peer in self.peers.iter_mut().filter(|p| rooms.contains(&p.room)) {
            drain(peer, &self.socket, &mut self.queue, tap);
        }
        self.process_queue();
    }
}

/// Polls one `Rtc` until it returns `Output::Timeout`: sends datagrams, handles events, and
/// starts a server offer if tracks need (un)publishing. Every mutation must be followed by this.
fn drain(peer: &mut Peer, socket: &UdpSocket, queue: &mut VecDeque<Propagated>, tap: Option<&MediaTap>) {
    if peer.remove.is_some() {
        return;
    }
    // A mutation inside the drain is fine: the loop below polls afterwards.
    peer.negotiate_if_needed();
    loop {
        if !peer.rtc.is_alive() {
            return;
        }
        match peer.rtc.poll_output() {
            Ok(Output::Timeout(t)) => {
                peer.next_timeout = t;
                return;
            }
            Ok(Output::Transmit(t)) => send(socket, &t.contents, t.destination),
            Ok(Output::Event(e)) => {
                let was_ready = peer.media_ready;
                peer.handle_event(e, queue, tap);
                if !was_ready && peer.media_ready {
                    // Just connected: offer the room's existing tracks now (mutation inside
                    // the drain loop is allowed; polling continues below).
                    peer.negotiate_if_needed();
                }
            }
            Err(e) => {
                warn!(participant = %peer.participant, error = ?e, "rtc poll failed");
                peer.evict("connection error");
                return;
            }
        }
    }
}

/// Graceful close: RTCP BYE + DTLS close_notify let the browser notice at once instead of after
/// its ICE timeout. Events produced while closing are discarded.
fn close_peer(peer: &mut Peer, socket: &UdpSocket) {
    let _ = peer.rtc.close();
    for _ in 0..64 {
        match peer.rtc.poll_output() {
            Ok(Output::Transmit(t)) => send(socket, &t.contents, t.destination),
            Ok(Output::Event(_)) => {}
            Ok(Output::Timeout(_)) | Err(_) => break,
        }
    }
    peer.rtc.disconnect();
}

/// Non-blocking send: UDP is lossy anyway, and awaiting here would stall every room for one
/// slow socket buffer. str0m's NACK/RTX repairs occasional drops.
fn send(socket: &UdpSocket, data: &[u8], to: SocketAddr) {
    if let Err(e) = socket.try_send_to(data, to) {
        if e.kind() == io::ErrorKind::WouldBlock {
            trace!(%to, "udp send buffer full, datagram dropped");
        } else {
            debug!(%to, error = %e, "udp send failed");
        }
    }
}

impl Peer {
    /// Marks the peer for removal without telling its client (it left on its own).
    fn mark_removed(&mut self, reason: &str) {
        self.remove.get_or_insert_with(|| reason.to_owned());
    }

    /// Marks the peer for removal and tells its client why, once (so it can show it or rejoin).
    fn evict(&mut self, reason: &str) {
        if self.remove.is_none() {
            let _ = self.signal.send(SignalOut::Removed {
                reason: reason.to_owned(),
            });
            self.remove = Some(reason.to_owned());
        }
    }

    /// Whether this peer should get media of `track` (same room, not its own).
    fn receives_from(&self, track: &TrackIn) -> bool {
        self.remove.is_none() && self.key != track.origin && self.room == track.info.room
    }

    fn track_out_for(&self, track: &Arc<TrackIn>) -> Option<&TrackOut> {
        self.tracks_out
            .iter()
            .find(|o| std::ptr::eq(Weak::as_ptr(&o.track_in), Arc::as_ptr(track)))
    }

    fn open_mid_for(&self, track: &Arc<TrackIn>) -> Option<Mid> {
        match self.track_out_for(track)?.state {
            TrackOutState::Open(mid) => Some(mid),
            _ => None,
        }
    }

    fn handle_event(&mut self, event: Event, queue: &mut VecDeque<Propagated>, tap: Option<&MediaTap>) {
        match event {
            Event::Connected => self.media_ready = true,
            Event::IceConnectionStateChange(state) => match state {
                IceConnectionState::Connected | IceConnectionState::Completed => {
                    self.connected = true;
                    self.disconnected_since = None;
                }
                // May recover (str0m never declares "failed"); housekeeping applies the grace period.
                IceConnectionState::Disconnected => {
                    self.disconnected_since.get_or_insert_with(Instant::now);
                }
                _ => {}
            },
            Event::MediaAdded(added) => {
                // Only m-lines the browser sends on become incoming tracks. (str0m does not emit
                // MediaAdded for our own add_media, so forwarded tracks never loop back.)
                if !added.direction.is_receiving() {
                    return;
                }
                // A participant may not share a screen: a second video track, however it is
                // called, goes nowhere.
                let videos = self
                    .tracks_in
                    .iter()
                    .filter(|t| t.track.info.kind == MediaKind::Video)
                    .count();
                if added.kind == MediaKind::Video && videos >= self.max_video {
                    debug!(participant = %self.participant, "video track beyond what is allowed, not forwarded");
                    return;
                }
                let source = self.sources.get(&added.mid.to_string()).cloned().unwrap_or_else(|| {
                    if added.kind == MediaKind::Audio {
                        "mic".into()
                    } else {
                        "camera".into()
                    }
                });
                let track = Arc::new(TrackIn {
                    origin: self.key,
                    info: Arc::new(TrackInfo {
                        room: self.room.clone(),
                        participant: self.participant.clone(),
                        source: source.into(),
                        kind: added.kind,
                        mid: added.mid,
                    }),
                    paused: AtomicBool::new(true),
                });
                self.tracks_in.push(TrackInEntry {
                    track: track.clone(),
                    last_keyframe_request: None,
                });
                queue.push_back(Propagated::TrackOpen(track));
            }
            // Client stopped a transceiver / made it inactive: unpublish it. Viewers notice the
            // dead Weak at their next drain (next packet or timeout, typically < 100 ms).
            Event::MediaChanged(changed) if !changed.direction.is_receiving() => {
                self.tracks_in.retain(|t| t.track.info.mid != changed.mid);
            }
            Event::MediaData(data) => self.handle_media_data(data, queue, tap),
            Event::KeyframeRequest(req) => {
                // req.mid is the mid of *our outgoing* copy; map it back to the source track.
                let track = self
                    .tracks_out
                    .iter()
                    .find(|o| matches!(o.state, TrackOutState::Open(m) if m == req.mid))
                    .and_then(|o| o.track_in.upgrade());
                if let Some(track) = track {
                    queue.push_back(Propagated::KeyframeRequest(track, req.kind));
                }
            }
            // str0m resumes a stream on any packet, padding and bandwidth probes
            // included, which a browser sends on an m-line with no track (a screen
            // nobody shares) while it warms up. Only a frame resumes a track (see
            // `handle_media_data`); a pause is believed at once.
            Event::StreamPaused(p) if p.paused => {
                if let Some(t) = self.tracks_in.iter().find(|t| t.track.info.mid == p.mid) {
                    if !t.track.paused.swap(true, Ordering::Relaxed) {
                        queue.push_back(Propagated::Paused(t.track.clone(), true));
                    }
                }
            }
            Event::Closed => self.mark_removed("closed by client"),
            _ => {}
        }
    }

    fn handle_media_data(&mut self, data: MediaData, queue: &mut VecDeque<Propagated>, tap: Option<&MediaTap>) {
        let Some(entry) = self.tracks_in.iter_mut().find(|t| t.track.info.mid == data.mid) else {
            return; // unpublished track or not yet announced
        };
        if !data.contiguous && entry.track.info.kind == MediaKind::Video {
            // Upstream loss: one fresh keyframe repairs every viewer at once (as chat.rs does).
            let now = Instant::now();
            if entry
                .last_keyframe_request
                .is_none_or(|t| now.duration_since(t) >= KEYFRAME_THROTTLE)
            {
                entry.last_keyframe_request = Some(now);
                if let Some(mut writer) = self.rtc.writer(data.mid) {
                    let _ = writer.request_keyframe(data.rid, KeyframeRequestKind::Fir);
                }
            }
        }
        if let Some(tap) = tap {
            let spec = data.params.spec();
            tap(TapFrame {
                track: entry.track.info.clone(),
                codec: spec.codec,
                clock_rate: spec.clock_rate.get(),
                rtp_time: data.time,
                network_time: data.network_time,
                keyframe: data.is_keyframe(),
                contiguous: data.contiguous,
                data: data.data.clone(),
            });
        }
        if entry.track.paused.swap(false, Ordering::Relaxed) {
            queue.push_back(Propagated::Paused(entry.track.clone(), false));
        }
        queue.push_back(Propagated::MediaData(entry.track.clone(), data));
    }

    /// Writes one frame of `track` to this peer. Returns whether the `Rtc` was mutated.
    fn forward(&mut self, track: &Arc<TrackIn>, data: &MediaData) -> bool {
        let Some(mid) = self.open_mid_for(track) else {
            return false; // not negotiated yet (or being stopped)
        };
        let Some(writer) = self.rtc.writer(mid) else {
            return false;
        };
        // PTs are per session: map the sender's codec to this receiver's PT.
        let Some(pt) = writer.match_params(data.params) else {
            return false;
        };
        // Arrival time as wallclock is what str0m recommends for a simple SFU.
        if let Err(e) = writer.write(pt, data.network_time, data.time, data.data.clone()) {
            debug!(participant = %self.participant, error = ?e, "forward failed");
        }
        true
    }

    /// Sends a (throttled) keyframe request for one of this peer's own tracks.
    fn request_keyframe(&mut self, track: &Arc<TrackIn>, kind: KeyframeRequestKind, now: Instant) -> bool {
        let Some(entry) = self.tracks_in.iter_mut().find(|t| Arc::ptr_eq(&t.track, track)) else {
            return false;
        };
        if entry
            .last_keyframe_request
            .is_some_and(|t| now.duration_since(t) < KEYFRAME_THROTTLE)
        {
            return false;
        }
        entry.last_keyframe_request = Some(now);
        let Some(mut writer) = self.rtc.writer(track.info.mid) else {
            return false;
        };
        if let Err(e) = writer.request_keyframe(None, kind) {
            debug!(error = ?e, "keyframe request failed");
        }
        true
    }

    /// Server-initiated renegotiation for tracks that appeared or vanished (chat.rs
    /// `negotiate_if_needed`, with the offer going to the WebSocket instead of a data channel).
    fn negotiate_if_needed(&mut self) {
        if !self.media_ready || self.pending.is_some() || !self.rtc.is_alive() {
            return;
        }
        // Tracks whose origin left before we offered them: forget them.
        self.tracks_out
            .retain(|t| !(t.state == TrackOutState::ToOpen && t.track_in.strong_count() == 0));
        for t in &mut self.tracks_out {
            if let TrackOutState::Open(m) = t.state {
                if t.track_in.strong_count() == 0 {
                    t.state = TrackOutState::ToStop(m);
                }
            }
        }
        if !self
            .tracks_out
            .iter()
            .any(|t| matches!(t.state, TrackOutState::ToOpen | TrackOutState::ToStop(_)))
        {
            return;
        }

        let mut change = self.rtc.sdp_api();
        for t in &mut self.tracks_out {
            match t.state {
                TrackOutState::ToOpen => {
                    let Some(track) = t.track_in.upgrade() else { continue };
                    let info = &track.info;
                    // stream id groups mic+camera for lip-sync; screen gets its own stream.
                    // ('.' is an RFC 8830 token char; str0m filters others, e.g. '~'.)
                    let stream_id = if &*info.source == "screen" {
                        format!("{}.screen", info.participant)
                    } else {
                        info.participant.to_string()
                    };
                    let track_id = format!("{}.{}", info.participant, info.source);
                    let mid = change.add_media(info.kind, Direction::SendOnly, Some(stream_id), Some(track_id), None);
                    t.state = TrackOutState::Negotiating(mid);
                }
                TrackOutState::ToStop(mid) => {
                    change.stop_media(mid);
                    t.state = TrackOutState::NegotiatingStop(mid);
                }
                _ => {}
            }
        }
        // `has_changes` can be false when only already-stopped mids were "stopped"
        // (stop_media mutates the session immediately); then the NegotiatingStop entries
        // linger until the next successful answer, which is harmless.
        if !change.has_changes() {
            return;
        }
        let Some((offer, pending)) = change.apply() else {
            return;
        };
        self.negotiation_seq += 1;
        let id = self.negotiation_seq;
        self.pending = Some(PendingOffer {
            id,
            offer: pending,
            sent_at: Instant::now(),
        });
        let tracks = self.track_table();
        for t in &mut self.tracks_out {
            if let (TrackOutState::Negotiating(_), Some(track)) = (t.state, t.track_in.upgrade()) {
                t.offered_paused = Some(track.paused.load(Ordering::Relaxed));
            }
        }
        let _ = self.signal.send(SignalOut::Offer {
            negotiation_id: id,
            sdp: offer.to_sdp_string(),
            tracks,
        });
    }

    /// mid → participant table for everything negotiated or being negotiated towards the client.
    fn track_table(&self) -> Vec<RemoteTrack> {
        self.tracks_out
            .iter()
            .filter_map(|o| {
                let mid = match o.state {
                    TrackOutState::Negotiating(m) | TrackOutState::Open(m) => m,
                    _ => return None,
                };
                let track = o.track_in.upgrade()?;
                Some(RemoteTrack {
                    mid: mid.to_string(),
                    participant: track.info.participant.to_string(),
                    kind: if track.info.kind == MediaKind::Audio {
                        "audio"
                    } else {
                        "video"
                    },
                    source: track.info.source.to_string(),
                    paused: track.paused.load(Ordering::Relaxed),
                })
            })
            .collect()
    }

    fn handle_answer(&mut self, negotiation_id: u64, sdp: &str, queue: &mut VecDeque<Propagated>) {
        if self.pending.as_ref().map(|p| p.id) != Some(negotiation_id) {
            // Answer to an offer we rolled back on glare (the client should not have answered it).
            debug!(participant = %self.participant, negotiation_id, "stale answer ignored");
            return;
        }
        let pending = self.pending.take().expect("checked above");
        let result = SdpAnswer::from_sdp_string(sdp)
            .map_err(|e| e.to_string())
            .and_then(|answer| {
                self.rtc
                    .sdp_api()
                    .accept_answer(pending.offer, answer)
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = result {
            // The session state is now uncertain; dropping the peer lets the client rejoin cleanly.
            warn!(participant = %self.participant, error = %e, "answer rejected");
            let _ = self.signal.send(SignalOut::Error {
                message: format!("answer rejected: {e}"),
            });
            self.evict("negotiation failed");
            return;
        }
        let (states, videos) = open_negotiated(&mut self.tracks_out);
        for state in states {
            let _ = self.signal.send(state);
        }
        // Newly visible video: ask the sender for a keyframe so the picture appears at once.
        for track in videos {
            queue.push_back(Propagated::KeyframeRequest(track, KeyframeRequestKind::Pli));
        }
        // Stopped m-lines are done (their slots may be recycled by later add_media).
        self.tracks_out
            .retain(|t| !matches!(t.state, TrackOutState::NegotiatingStop(_)));
    }

    /// Client re-offer. str0m's `accept_offer` rolls back our pending offer, so the tracks we were
    /// negotiating go back to "to do" and are re-offered after this exchange (server = polite peer).
    fn handle_client_offer(&mut self, sdp: &str, sources: HashMap<String, String>) {
        self.sources.extend(sources);
        let answer = SdpOffer::from_sdp_string(sdp)
            .map_err(|e| e.to_string())
            .and_then(|offer| self.rtc.sdp_api().accept_offer(offer).map_err(|e| e.to_string()));
        match answer {
            Ok(answer) => {
                self.pending = None;
                self.reset_negotiating();
                let _ = self.signal.send(SignalOut::Answer {
                    sdp: answer.to_sdp_string(),
                });
            }
            Err(e) => {
                let _ = self.signal.send(SignalOut::Error {
                    message: format!("offer rejected: {e}"),
                });
            }
        }
    }

    fn reset_negotiating(&mut self) {
        for t in &mut self.tracks_out {
            t.state = match t.state {
                TrackOutState::Negotiating(_) => TrackOutState::ToOpen,
                TrackOutState::NegotiatingStop(m) => TrackOutState::ToStop(m),
                s => s,
            };
        }
    }
}

// Glue sketch for the axum WebSocket handler (not part of this module):
//
//   let (sig_tx, mut sig_rx) = mpsc::unbounded_channel();
//   // writer task: while let Some(m) = sig_rx.recv().await { ws_tx.send(Message::Text(serde_json::to_string(&m)?.into())).await?; }
//   // reader: match serde_json::from_str::<SignalIn>(&text)? {
//   //   SignalIn::Join { sdp, sources } => key = Some(sfu.join(&room, &participant, sdp, sources, sig_tx.clone()).await?),
//   //   SignalIn::Answer { negotiation_id, sdp } => sfu.answer(key?, negotiation_id, sdp).await?,
//   //   SignalIn::Offer { sdp, sources } => sfu.offer(key?, sdp, sources).await?,
//   //   SignalIn::Leave => break,
//   // }
//   // on socket close: if let Some(k) = key { sfu.leave(k).await.ok(); }

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(paused: bool) -> Arc<TrackIn> {
        Arc::new(TrackIn {
            origin: PeerKey(1),
            info: Arc::new(TrackInfo {
                room: "room".into(),
                participant: "host".into(),
                source: "screen".into(),
                kind: MediaKind::Video,
                mid: Mid::from("1"),
            }),
            paused: AtomicBool::new(paused),
        })
    }

    fn negotiating(track: &Arc<TrackIn>, offered_paused: bool) -> TrackOut {
        TrackOut {
            track_in: Arc::downgrade(track),
            state: TrackOutState::Negotiating(Mid::from("3")),
            offered_paused: Some(offered_paused),
        }
    }

    /// The race seen in the three-person call: the offer said the host's screen
    /// carried media, it paused before the viewer answered (a change that reached
    /// no open m-line), and the viewer kept an empty screen tile for good.
    #[test]
    fn an_answer_tells_the_viewer_of_a_pause_it_missed_while_negotiating() {
        let track = screen(true);
        let mut out = [negotiating(&track, false)];
        let (states, videos) = open_negotiated(&mut out);
        assert_eq!(out[0].state, TrackOutState::Open(Mid::from("3")));
        assert!(matches!(
            states.as_slice(),
            [SignalOut::TrackState { mid, paused: true }] if mid == "3"
        ));
        assert_eq!(videos.len(), 1, "a newly open video asks for a keyframe");
    }

    #[test]
    fn an_answer_sends_nothing_when_the_offer_was_still_right() {
        for paused in [true, false] {
            let track = screen(paused);
            let mut out = [negotiating(&track, paused)];
            let (states, _) = open_negotiated(&mut out);
            assert!(states.is_empty(), "paused {paused}: {states:?}");
        }
    }

    #[test]
    fn an_answer_leaves_tracks_that_are_not_negotiating_alone() {
        let track = screen(false);
        let mut out = [TrackOut {
            state: TrackOutState::Open(Mid::from("3")),
            ..negotiating(&track, true)
        }];
        let (states, videos) = open_negotiated(&mut out);
        assert!(states.is_empty() && videos.is_empty());
    }
}
