//! What a peer receives, negotiated: offers for the tracks it should receive,
//! its answers, and the offers its browser makes (new sources to send).

use super::*;

impl Peer {
    /// Server-initiated renegotiation for tracks that appeared or vanished (chat.rs
    /// `negotiate_if_needed`, with the offer going to the WebSocket instead of a data channel).
    pub(in crate::media::sfu) fn negotiate_if_needed(&mut self) {
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
    pub(in crate::media::sfu) fn track_table(&self) -> Vec<RemoteTrack> {
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

    pub(in crate::media::sfu) fn handle_answer(
        &mut self,
        negotiation_id: u64,
        sdp: &str,
        queue: &mut VecDeque<Propagated>,
    ) {
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
    pub(in crate::media::sfu) fn handle_client_offer(&mut self, sdp: &str, sources: HashMap<String, String>) {
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

    pub(in crate::media::sfu) fn reset_negotiating(&mut self) {
        for t in &mut self.tracks_out {
            t.state = match t.state {
                TrackOutState::Negotiating(_) => TrackOutState::ToOpen,
                TrackOutState::NegotiatingStop(m) => TrackOutState::ToStop(m),
                s => s,
            };
        }
    }
}
