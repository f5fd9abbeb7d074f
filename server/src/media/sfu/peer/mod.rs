//! A peer of the SFU: one browser's `Rtc`, the tracks it sends and receives, and
//! the negotiation of what it receives.

use super::*;

mod negotiation;

/// An incoming track. Its origin peer holds the only strong `Arc`; receivers hold `Weak`s, so
/// dropping the origin automatically turns every forwarded copy into "to stop".
pub(super) struct TrackIn {
    pub(super) origin: PeerKey,
    pub(super) info: Arc<TrackInfo>,
    pub(super) paused: AtomicBool,
}

pub(super) struct TrackInEntry {
    pub(super) track: Arc<TrackIn>,
    pub(super) last_keyframe_request: Option<Instant>,
}

/// A track forwarded to this peer and the state of its m-line (same states as chat.rs).
pub(super) struct TrackOut {
    pub(super) track_in: Weak<TrackIn>,
    pub(super) state: TrackOutState,
    /// Whether the offer that negotiates the m-line told the viewer the track is
    /// paused. A pause change while the viewer has not answered yet reaches no
    /// open m-line and is not sent, so the answer compares this with the track's
    /// state then and sends the difference (see [`open_negotiated`]).
    pub(super) offered_paused: Option<bool>,
}

impl TrackOut {
    pub(super) fn to_open(track: &Arc<TrackIn>) -> Self {
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
pub(super) fn open_negotiated(tracks_out: &mut [TrackOut]) -> (Vec<SignalOut>, Vec<Arc<TrackIn>>) {
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
pub(super) enum TrackOutState {
    ToOpen,
    Negotiating(Mid),
    Open(Mid),
    ToStop(Mid),
    NegotiatingStop(Mid),
}

pub(super) struct PendingOffer {
    pub(super) id: u64,
    pub(super) offer: SdpPendingOffer,
    pub(super) sent_at: Instant,
}

pub(super) struct Peer {
    pub(super) key: PeerKey,
    pub(super) room: Arc<str>,
    pub(super) participant: Arc<str>,
    pub(super) rtc: Rtc,
    pub(super) signal: mpsc::UnboundedSender<SignalOut>,
    /// Client mid (as string) → "mic" | "camera" | "screen".
    pub(super) sources: HashMap<String, String>,
    /// Most video tracks of this peer forwarded to the others.
    pub(super) max_video: usize,
    pub(super) tracks_in: Vec<TrackInEntry>,
    pub(super) tracks_out: Vec<TrackOut>,
    pub(super) pending: Option<PendingOffer>,
    pub(super) negotiation_seq: u64,
    /// Last `Output::Timeout`; the peer gets `Input::Timeout` only when this is due.
    pub(super) next_timeout: Instant,
    pub(super) created: Instant,
    /// ICE connected (may drop to Disconnected and come back).
    pub(super) connected: bool,
    /// ICE + DTLS up (`Event::Connected`). Server offers wait for this, like chat.rs waits for
    /// its data channel: re-offering on a session that never connected is untested territory.
    pub(super) media_ready: bool,
    pub(super) disconnected_since: Option<Instant>,
    /// Set when the peer must go; the reaper closes and drops it.
    pub(super) remove: Option<String>,
}

// Media frames are the common case and move through a short queue once: boxing
// them would allocate per frame to save a few hundred bytes of queue slots.
#[allow(clippy::large_enum_variant)]
pub(super) enum Propagated {
    /// A new incoming track: offer it to the other peers of the room.
    TrackOpen(Arc<TrackIn>),
    MediaData(Arc<TrackIn>, MediaData),
    /// Ask the origin of this track for a keyframe.
    KeyframeRequest(Arc<TrackIn>, KeyframeRequestKind),
    Paused(Arc<TrackIn>, bool),
}

impl Peer {
    /// Marks the peer for removal without telling its client (it left on its own).
    pub(super) fn mark_removed(&mut self, reason: &str) {
        self.remove.get_or_insert_with(|| reason.to_owned());
    }

    /// Marks the peer for removal and tells its client why, once (so it can show it or rejoin).
    pub(super) fn evict(&mut self, reason: &str) {
        if self.remove.is_none() {
            let _ = self.signal.send(SignalOut::Removed {
                reason: reason.to_owned(),
            });
            self.remove = Some(reason.to_owned());
        }
    }

    /// Whether this peer should get media of `track` (same room, not its own).
    pub(super) fn receives_from(&self, track: &TrackIn) -> bool {
        self.remove.is_none() && self.key != track.origin && self.room == track.info.room
    }

    pub(super) fn track_out_for(&self, track: &Arc<TrackIn>) -> Option<&TrackOut> {
        self.tracks_out
            .iter()
            .find(|o| std::ptr::eq(Weak::as_ptr(&o.track_in), Arc::as_ptr(track)))
    }

    pub(super) fn open_mid_for(&self, track: &Arc<TrackIn>) -> Option<Mid> {
        match self.track_out_for(track)?.state {
            TrackOutState::Open(mid) => Some(mid),
            _ => None,
        }
    }

    pub(super) fn handle_event(&mut self, event: Event, queue: &mut VecDeque<Propagated>, tap: Option<&MediaTap>) {
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

    pub(super) fn handle_media_data(
        &mut self,
        data: MediaData,
        queue: &mut VecDeque<Propagated>,
        tap: Option<&MediaTap>,
    ) {
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
    pub(super) fn forward(&mut self, track: &Arc<TrackIn>, data: &MediaData) -> bool {
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
    pub(super) fn request_keyframe(&mut self, track: &Arc<TrackIn>, kind: KeyframeRequestKind, now: Instant) -> bool {
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
mod tests;
