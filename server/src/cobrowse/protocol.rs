//! What participants and a co-browsing session say to each other over
//! `/cobrowse/{id}/ws` (README, "Co-browsing"). Binary messages from the server
//! are JPEG frames of the shared browser; everything else is JSON text tagged
//! by `type`. Coordinates are CSS pixels of the shared viewport.

use serde::{Deserialize, Serialize};

/// A message from a participant.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum ClientMessage {
    /// Where the participant's pointer is (`null`: it left the screen).
    Pointer {
        /// Viewport x.
        x: Option<f64>,
        /// Viewport y.
        y: Option<f64>,
    },
    /// A mouse button or move (control only).
    Mouse {
        /// `mousePressed`, `mouseReleased` or `mouseMoved`.
        event: String,
        /// Viewport x.
        x: f64,
        /// Viewport y.
        y: f64,
        /// `left`, `middle`, `right` or `none`.
        #[serde(default)]
        button: Option<String>,
        /// 1 for a click, 2 for a double click.
        #[serde(default)]
        click_count: Option<i64>,
        /// Alt 1, Ctrl 2, Meta 4, Shift 8.
        #[serde(default)]
        modifiers: i64,
    },
    /// The wheel (control only).
    Wheel {
        /// Viewport x.
        x: f64,
        /// Viewport y.
        y: f64,
        /// Horizontal scroll, px.
        delta_x: f64,
        /// Vertical scroll, px.
        delta_y: f64,
    },
    /// A key (control only).
    Key {
        /// `keyDown` or `keyUp`.
        event: String,
        /// `KeyboardEvent.key`.
        key: String,
        /// `KeyboardEvent.code`.
        #[serde(default)]
        code: String,
        /// `KeyboardEvent.keyCode`.
        #[serde(default)]
        key_code: i64,
        /// The text a key down types, if any.
        #[serde(default)]
        text: Option<String>,
        /// Alt 1, Ctrl 2, Meta 4, Shift 8.
        #[serde(default)]
        modifiers: i64,
    },
    /// Pasted or composed text (control only).
    Text {
        /// The text.
        text: String,
    },
    /// Open an address (control only).
    Navigate {
        /// An absolute http(s) URL.
        url: String,
    },
    /// History back (control only).
    Back,
    /// History forward (control only).
    Forward,
    /// Reload (control only).
    Reload,
    /// Hand control to a participant, or take it back (host only).
    Control {
        /// The participant who gets it.
        to: String,
    },
    /// End the session for everyone (host only).
    End,
}

impl ClientMessage {
    /// Whether only whoever holds control may send it.
    pub fn needs_control(&self) -> bool {
        !matches!(
            self,
            ClientMessage::Pointer { .. } | ClientMessage::Control { .. } | ClientMessage::End
        )
    }

    /// Whether its numbers are usable (finite, on a sane scale) and its text bounded.
    pub fn is_sane(&self) -> bool {
        let fine = |v: f64| v.is_finite() && v.abs() <= 100_000.0;
        match self {
            ClientMessage::Pointer { x, y } => x.is_none_or(fine) && y.is_none_or(fine),
            ClientMessage::Mouse { x, y, .. } => fine(*x) && fine(*y),
            ClientMessage::Wheel { x, y, delta_x, delta_y } => fine(*x) && fine(*y) && fine(*delta_x) && fine(*delta_y),
            ClientMessage::Key { key, code, text, .. } => {
                key.len() <= 64 && code.len() <= 64 && text.as_ref().is_none_or(|t| t.len() <= 16)
            }
            ClientMessage::Text { text } => text.len() <= 10_000,
            ClientMessage::Navigate { url } => url.len() <= 2048,
            ClientMessage::Control { to } => to.len() <= 16,
            ClientMessage::Back | ClientMessage::Forward | ClientMessage::Reload | ClientMessage::End => true,
        }
    }
}

/// A participant as the others see them.
#[derive(Debug, Clone, Serialize)]
pub struct ParticipantView {
    /// Their id in this session (`p1`, `p2`, …).
    pub id: String,
    /// Their name.
    pub name: String,
    /// `host` or `guest`.
    pub role: &'static str,
}

/// What every participant sees of the session.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StateView {
    /// The page's address.
    pub url: String,
    /// The page's title.
    pub title: String,
    /// Whether the page is loading.
    pub loading: bool,
    /// Whether history goes back.
    pub can_go_back: bool,
    /// Whether history goes forward.
    pub can_go_forward: bool,
    /// Who holds control.
    pub control: Option<String>,
    /// Who is here.
    pub participants: Vec<ParticipantView>,
    /// When the session ends at the latest (the links' validity), RFC 3339.
    pub ends_at: String,
}

/// A `notice`: something the participants should know (a refused address, a
/// refused download).
pub fn notice(code: &str, message: &str) -> String {
    serde_json::json!({"type": "notice", "code": code, "message": message}).to_string()
}

/// `ended`: the session is over, and why.
pub fn ended(reason: &str) -> String {
    let message = match reason {
        "idle" => "The session ended because nobody used it for a while.",
        "expired" => "The session ended: its links are no longer valid.",
        "ended_by_host" => "The host ended the session.",
        "browser_crashed" => "The shared browser stopped unexpectedly. Ask for a new link.",
        _ => "The session ended because the server is restarting. Ask for a new link.",
    };
    serde_json::json!({"type": "ended", "reason": reason, "message": message}).to_string()
}

/// `error`: joining failed, and why.
pub fn error(code: &str, message: &str) -> String {
    serde_json::json!({"type": "error", "code": code, "message": message}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_documented_messages() {
        let m: ClientMessage = serde_json::from_str(
            r#"{"type":"mouse","event":"mousePressed","x":10,"y":20,"button":"left","clickCount":1,"modifiers":0}"#,
        )
        .unwrap();
        assert!(m.needs_control() && m.is_sane());
        let w: ClientMessage = serde_json::from_str(r#"{"type":"wheel","x":1,"y":2,"deltaX":0,"deltaY":120}"#).unwrap();
        assert_eq!(
            w,
            ClientMessage::Wheel {
                x: 1.0,
                y: 2.0,
                delta_x: 0.0,
                delta_y: 120.0
            }
        );
        let k: ClientMessage =
            serde_json::from_str(r#"{"type":"key","event":"keyDown","key":"a","code":"KeyA","keyCode":65,"text":"a"}"#)
                .unwrap();
        assert!(matches!(k, ClientMessage::Key { key_code: 65, .. }));
        let p: ClientMessage = serde_json::from_str(r#"{"type":"pointer","x":null,"y":null}"#).unwrap();
        assert!(!p.needs_control());
        let c: ClientMessage = serde_json::from_str(r#"{"type":"control","to":"p2"}"#).unwrap();
        assert!(!c.needs_control());
        assert!(serde_json::from_str::<ClientMessage>(r#"{"type":"eval","code":"1"}"#).is_err());
        let huge = ClientMessage::Pointer {
            x: Some(f64::NAN),
            y: None,
        };
        assert!(!huge.is_sane());
    }
}
