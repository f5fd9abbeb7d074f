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
//! The loop lives here; [`handle`] is its face (configuration, what it says to
//! clients, and the handle that commands it), and [`peer`] holds one browser's
//! side (its tracks and their negotiation).
//!
//! Everything the server says to one client goes through ONE unbounded channel, so the WebSocket
//! writer forwards answers and offers in the order they were produced (a separate oneshot for the
//! answer could overtake a queued offer and break the offer/answer state machine).

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use str0m::change::{SdpAnswer, SdpOffer, SdpPendingOffer};
use str0m::media::{Direction, KeyframeRequestKind, MediaData, MediaKind, Mid};
use str0m::net::{Protocol, Receive};
use str0m::{Candidate, Event, IceConnectionState, Input, Output, Rtc};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tracing::{debug, info, trace, warn};

mod handle;
mod peer;

pub use handle::*;
use peer::*;

/// Minimum spacing between keyframe requests we send to one source track: every viewer's PLI
/// would otherwise turn into a keyframe storm at the sender.
const KEYFRAME_THROTTLE: Duration = Duration::from_secs(1);
/// A server offer unanswered for this long means the client is broken or gone. We evict instead of
/// re-offering: a slow client may still apply the old offer, and a re-offer with different
/// m-lines would then desynchronise the two sides for good. The client rejoins from scratch.
const NEGOTIATION_TIMEOUT: Duration = Duration::from_secs(15);
/// Upper bound on how long the loop sleeps, so housekeeping (timeouts, reaping) runs regularly.
const MAX_SLEEP: Duration = Duration::from_millis(500);

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
