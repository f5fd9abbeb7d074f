//! The shared page's newest picture, as every participant sees it.
//!
//! Chromium compresses screencast frames on a pool of threads and sends each
//! when its compression ends, so frames can arrive out of order: on a busy
//! machine the last frame of the page before a navigation may come after the
//! first of the next page. The page then stays still, no frame follows, and
//! everyone would keep seeing the page they left. Pictures are therefore
//! ordered by the time the browser captured them, and a picture older than the
//! one shown is dropped.

use axum::body::Bytes;
use tokio::sync::watch;

pub(super) struct Screen {
    frames: watch::Sender<Option<Bytes>>,
    /// When the picture shown was captured, in seconds since the Unix epoch
    /// (the screencast's `metadata.timestamp`, on this machine's clock).
    shown_captured_at: f64,
}

impl Screen {
    pub(super) fn new(frames: watch::Sender<Option<Bytes>>) -> Self {
        Screen {
            frames,
            shown_captured_at: f64::NEG_INFINITY,
        }
    }

    /// Shows `jpeg`, captured at `captured_at`, unless the picture shown was
    /// captured later. A picture whose time is unknown is shown. Returns
    /// whether it is shown.
    pub(super) fn offer(&mut self, captured_at: Option<f64>, jpeg: Bytes) -> bool {
        if let Some(at) = captured_at {
            if at <= self.shown_captured_at {
                return false;
            }
            self.shown_captured_at = at;
        }
        self.frames.send_replace(Some(jpeg));
        true
    }
}

/// Now, in the screencast's unit: seconds since the Unix epoch.
pub(super) fn now_seconds() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The race seen on a busy machine after *Back*: the white page's last
    /// frame arrived after the red page's first, and the still red page sent
    /// nothing more.
    #[test]
    fn a_frame_captured_before_the_one_shown_is_dropped() {
        let (tx, rx) = watch::channel(None);
        let mut screen = Screen::new(tx);
        assert!(screen.offer(Some(1.0), Bytes::from_static(b"white")));
        assert!(screen.offer(Some(3.0), Bytes::from_static(b"red")));
        assert!(!screen.offer(Some(2.0), Bytes::from_static(b"white, late")));
        assert!(!screen.offer(Some(3.0), Bytes::from_static(b"same time")));
        assert_eq!(rx.borrow().as_deref(), Some(&b"red"[..]));
        assert!(screen.offer(Some(4.0), Bytes::from_static(b"blue")));
        assert_eq!(rx.borrow().as_deref(), Some(&b"blue"[..]));
    }

    #[test]
    fn a_frame_without_a_time_is_shown_and_keeps_the_order() {
        let (tx, rx) = watch::channel(None);
        let mut screen = Screen::new(tx);
        assert!(screen.offer(Some(5.0), Bytes::from_static(b"a")));
        assert!(screen.offer(None, Bytes::from_static(b"b")));
        assert_eq!(rx.borrow().as_deref(), Some(&b"b"[..]));
        assert!(!screen.offer(Some(4.0), Bytes::from_static(b"old")));
    }
}
