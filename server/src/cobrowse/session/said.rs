//! What a participant says to the session, each message checked against
//! their role: pointer, input, navigation, control, and the end.

use rapport_core::{
    audit::{Actor, ActorKind},
    links::CobrowseRole,
    reports::facts::MeetingKind,
};
use serde_json::json;

use super::Session;
use crate::cobrowse::protocol::{self, ClientMessage};

impl Session {
    /// Handles what a participant said; returns a reason when it ends the session.
    pub(super) fn said(&mut self, from: &str, message: ClientMessage) -> Option<String> {
        let sender = self.peers.iter().find(|p| p.id == from)?;
        let host = sender.role == CobrowseRole::Host;
        if !message.is_sane() {
            return None;
        }
        if message.needs_control() && self.state.control.as_deref() != Some(from) {
            self.tell(
                from,
                &protocol::notice("not_in_control", "Someone else has control of the shared browser."),
            );
            return None;
        }
        let page = Some(self.page.as_str());
        match message {
            ClientMessage::Pointer { x, y } => {
                let moved = json!({"type": "pointer", "id": from, "x": x, "y": y}).to_string();
                self.broadcast_except(from, &moved);
            }
            ClientMessage::Mouse {
                event,
                x,
                y,
                button,
                click_count,
                modifiers,
            } => {
                let button = button.unwrap_or_else(|| "none".into());
                let bit = match button.as_str() {
                    "left" => 1,
                    "right" => 2,
                    "middle" => 4,
                    _ => 0,
                };
                let kind = match event.as_str() {
                    "mousePressed" => {
                        self.buttons |= bit;
                        "mousePressed"
                    }
                    "mouseReleased" => {
                        self.buttons &= !bit;
                        "mouseReleased"
                    }
                    _ => "mouseMoved",
                };
                self.cdp.send(
                    page,
                    "Input.dispatchMouseEvent",
                    json!({"type": kind, "x": x, "y": y, "button": button, "buttons": self.buttons,
                           "clickCount": click_count.unwrap_or(if kind == "mouseMoved" { 0 } else { 1 }), "modifiers": modifiers}),
                );
            }
            ClientMessage::Wheel { x, y, delta_x, delta_y } => self.cdp.send(
                page,
                "Input.dispatchMouseEvent",
                json!({"type": "mouseWheel", "x": x, "y": y, "deltaX": delta_x, "deltaY": delta_y}),
            ),
            ClientMessage::Key {
                event,
                key,
                code,
                key_code,
                text,
                modifiers,
            } => {
                let text = text.filter(|t| !t.is_empty());
                let kind = match (event.as_str(), &text) {
                    ("keyUp", _) => "keyUp",
                    (_, Some(_)) => "keyDown",
                    _ => "rawKeyDown",
                };
                let mut params = json!({"type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code,
                                        "nativeVirtualKeyCode": key_code, "modifiers": modifiers});
                if let (Some(text), "keyDown") = (text, kind) {
                    params["text"] = json!(text);
                    params["unmodifiedText"] = json!(text);
                }
                self.cdp.send(page, "Input.dispatchKeyEvent", params);
            }
            ClientMessage::Text { text } => self.cdp.send(page, "Input.insertText", json!({"text": text})),
            ClientMessage::Navigate { url } => self.navigate(url),
            ClientMessage::Back => self.go_in_history(-1),
            ClientMessage::Forward => self.go_in_history(1),
            ClientMessage::Reload => self.cdp.send(page, "Page.reload", json!({})),
            ClientMessage::Control { to } => {
                if !host || !self.peers.iter().any(|p| p.id == to) || self.state.control.as_deref() == Some(to.as_str())
                {
                    return None;
                }
                self.buttons = 0;
                self.state.control = Some(to);
                self.send_state();
                let (services, tenant, session, user) = (
                    self.services.clone(),
                    self.info.tenant_id.clone(),
                    self.info.session_id.clone(),
                    self.info.host_user_id.clone(),
                );
                tokio::spawn(async move {
                    let actor = match user.as_deref() {
                        Some(id) => Actor {
                            kind: ActorKind::User,
                            id: id.to_string(),
                            ip: None,
                            request_id: None,
                        },
                        None => Actor::system("cobrowse host"),
                    };
                    if let Err(e) = services
                        .record_cobrowse_handover(
                            &tenant,
                            MeetingKind::UniversalCobrowse,
                            &session,
                            user.as_deref(),
                            &actor,
                        )
                        .await
                    {
                        tracing::warn!(error = %e, "recording a control hand-over failed");
                    }
                });
            }
            ClientMessage::End if host => return Some("ended_by_host".into()),
            ClientMessage::End => {}
        }
        None
    }
}
