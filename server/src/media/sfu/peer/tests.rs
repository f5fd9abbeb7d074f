//! Unit tests of an SFU peer's negotiation: what an answer tells the viewer.

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
