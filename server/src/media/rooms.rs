//! Who is in which conference on this instance: each participant's name, role
//! and whether the waiting room let them in, and the channel to their
//! WebSocket. Every change is followed by [`Rooms::announce`], which tells the
//! participants the roster and the hosts who waits.

use rapport_core::ids::TenantId;
use std::collections::HashMap;

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// A message for a participant's WebSocket; `close` ends it after sending.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The JSON text frame.
    pub message: Value,
    /// Whether the socket closes after it.
    pub close: bool,
}

impl Outgoing {
    /// A message; the socket stays open.
    pub fn say(message: Value) -> Self {
        Outgoing { message, close: false }
    }

    /// A last message; the socket closes.
    pub fn last(message: Value) -> Self {
        Outgoing { message, close: true }
    }
}

/// One participant (or guest in the waiting room).
#[derive(Debug)]
pub struct Member {
    /// Random per connection.
    pub id: String,
    /// The name they gave.
    pub name: String,
    /// A signed-in agent of the appointment's tenant: admits, declines,
    /// removes. Their user id.
    pub host: Option<String>,
    /// Past the waiting room (set by [`Rooms::enter`] and [`Rooms::admit`]).
    pub admitted: bool,
    /// Their WebSocket.
    pub tx: mpsc::UnboundedSender<Outgoing>,
}

/// A participant as the others see them.
#[derive(Debug, Clone, Serialize)]
pub struct Seen {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// Host or guest.
    pub host: bool,
}

/// A conference that ended: its last participant left.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    /// When the first participant was let in, unix ms.
    pub started_at: i64,
    /// When the last one left, unix ms.
    pub ended_at: i64,
    /// The user id of the first host who joined.
    pub host: Option<String>,
    /// How many were let in, all told.
    pub participants: i64,
}

/// One conference: who is in it or waits, whether it is recorded, and what
/// the report will count.
#[derive(Debug, Default)]
struct Room {
    tenant_id: TenantId,
    members: Vec<Member>,
    started_at: Option<i64>,
    host: Option<String>,
    participants: i64,
    /// The appointment's recording switch, as last heard.
    recording: bool,
}

impl Room {
    /// Counts a member who is let in.
    fn let_in(&mut self, index: usize) {
        let member = &mut self.members[index];
        member.admitted = true;
        self.participants += 1;
        self.started_at.get_or_insert_with(rapport_core::time::now_ms);
        if self.host.is_none() {
            self.host = member.host.clone();
        }
    }
}

/// Most people in one call (hosts included); hosts get in even past it.
pub const MAX_IN_CALL: usize = 12;
/// Most guests waiting in one call's waiting room.
pub const MAX_WAITING: usize = 12;

/// The conferences of this instance, by appointment id.
#[derive(Debug, Default)]
pub struct Rooms {
    rooms: std::sync::Mutex<HashMap<String, Room>>,
}

impl Rooms {
    fn with<T>(&self, room: &str, f: impl FnOnce(&mut Vec<Member>) -> T) -> T {
        self.with_room(room, |r| f(&mut r.members))
    }

    fn with_room<T>(&self, room: &str, f: impl FnOnce(&mut Room) -> T) -> T {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let entry = rooms.entry(room.to_string()).or_default();
        let out = f(entry);
        if entry.members.is_empty() {
            rooms.remove(room);
        }
        out
    }

    /// Adds a member, waiting, or let in when `admitted`. The first one in
    /// opens the room of `tenant_id`, recorded when `record` is on.
    ///
    /// Refused (`Err("full")`) for a guest when the call already has
    /// [`MAX_IN_CALL`] people in it, or when [`MAX_WAITING`] guests wait:
    /// the waiting room has a bound of its own, so guests who wait (however
    /// many connections a join link opens) never take the call's places.
    /// Hosts always get in.
    pub fn enter(
        &self,
        room: &str,
        tenant_id: &TenantId,
        record: bool,
        member: Member,
        admitted: bool,
    ) -> Result<(), &'static str> {
        self.with_room(room, |r| {
            if member.host.is_none() {
                let in_call = r.members.iter().filter(|m| m.admitted).count();
                let waiting = r.members.len() - in_call;
                if (admitted && in_call >= MAX_IN_CALL) || (!admitted && waiting >= MAX_WAITING) {
                    return Err("full");
                }
            }
            if r.members.is_empty() {
                r.tenant_id = tenant_id.clone();
                r.recording = record;
            }
            r.members.push(member);
            if admitted {
                r.let_in(r.members.len() - 1);
            }
            Ok(())
        })
    }

    /// Lets a waiting guest in; false when no such guest waits, or when the
    /// call is full ([`MAX_IN_CALL`]).
    pub fn admit(&self, room: &str, id: &str) -> bool {
        self.with_room(room, |r| {
            let in_call = r.members.iter().filter(|m| m.admitted).count();
            match r.members.iter().position(|m| m.id == id && !m.admitted) {
                Some(index) if in_call < MAX_IN_CALL => {
                    r.let_in(index);
                    true
                }
                _ => false,
            }
        })
    }

    /// Takes a member out (declined, removed or gone): the member, if there,
    /// and the conference's facts when it was the last one in it.
    pub fn take(&self, room: &str, id: &str) -> (Option<Member>, Option<Ended>) {
        self.with_room(room, |r| {
            let member = r.members.iter().position(|m| m.id == id).map(|i| r.members.remove(i));
            let ended = match (member.is_some() && r.members.is_empty(), r.started_at) {
                (true, Some(started_at)) => Some(Ended {
                    started_at,
                    ended_at: rapport_core::time::now_ms(),
                    host: r.host.clone(),
                    participants: r.participants,
                }),
                _ => None,
            };
            (member, ended)
        })
    }

    /// Sets the room's recording switch, if the room is open here, and tells
    /// everyone in the call when it changed. Returns whether it changed.
    pub fn set_recording(&self, room: &str, tenant_id: &TenantId, on: bool) -> bool {
        let mut rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let Some(r) = rooms.get_mut(room).filter(|r| r.tenant_id == *tenant_id) else {
            return false;
        };
        if r.recording == on {
            return false;
        }
        r.recording = on;
        let message = json!({"type": "recording", "recording": on});
        for member in r.members.iter().filter(|m| m.admitted) {
            let _ = member.tx.send(Outgoing::say(message.clone()));
        }
        true
    }

    /// Whether the room is recorded now.
    pub fn is_recording(&self, room: &str) -> bool {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        rooms.get(room).is_some_and(|r| r.recording)
    }

    /// The rooms open here, with their tenants.
    pub fn open(&self) -> Vec<(String, TenantId)> {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        rooms.iter().map(|(id, r)| (id.clone(), r.tenant_id.clone())).collect()
    }

    /// A participant's name and the room's first host (for a recording).
    pub fn name_and_host(&self, room: &str, id: &str) -> Option<(String, Option<String>)> {
        let rooms = self.rooms.lock().unwrap_or_else(|e| e.into_inner());
        let r = rooms.get(room)?;
        let name = r.members.iter().find(|m| m.id == id)?.name.clone();
        Some((name, r.host.clone()))
    }

    /// Whether `id` is an admitted host of the room.
    pub fn is_host(&self, room: &str, id: &str) -> bool {
        self.with(room, |m| m.iter().any(|m| m.id == id && m.host.is_some() && m.admitted))
    }

    /// The admitted participants, in the order they came.
    pub fn roster(&self, room: &str) -> Vec<Seen> {
        self.with(room, |m| {
            m.iter()
                .filter(|m| m.admitted)
                .map(|m| Seen {
                    id: m.id.clone(),
                    name: m.name.clone(),
                    host: m.host.is_some(),
                })
                .collect()
        })
    }

    /// Sends a message to one member.
    pub fn tell(&self, room: &str, id: &str, message: Outgoing) {
        self.with(room, |m| {
            if let Some(member) = m.iter().find(|m| m.id == id) {
                let _ = member.tx.send(message);
            }
        });
    }

    /// Sends a chat message from `from` to everyone in the call, `from` included.
    pub fn chat(&self, room: &str, from: &str, text: &str) {
        self.with(room, |members| {
            let Some(name) = members
                .iter()
                .find(|m| m.id == from && m.admitted)
                .map(|m| m.name.clone())
            else {
                return;
            };
            let message = json!({"type": "chat", "from": from, "name": name, "text": text,
                "at": chrono::Utc::now().to_rfc3339()});
            for member in members.iter().filter(|m| m.admitted) {
                let _ = member.tx.send(Outgoing::say(message.clone()));
            }
        });
    }

    /// Tells every admitted participant the roster, and the hosts who waits.
    pub fn announce(&self, room: &str) {
        self.with(room, |members| {
            let roster: Vec<Seen> = members
                .iter()
                .filter(|m| m.admitted)
                .map(|m| Seen {
                    id: m.id.clone(),
                    name: m.name.clone(),
                    host: m.host.is_some(),
                })
                .collect();
            let waiting: Vec<Value> = members
                .iter()
                .filter(|m| !m.admitted)
                .map(|m| json!({"id": m.id, "name": m.name}))
                .collect();
            for member in members.iter().filter(|m| m.admitted) {
                let _ = member
                    .tx
                    .send(Outgoing::say(json!({"type": "participants", "participants": roster})));
                if member.host.is_some() {
                    let _ = member
                        .tx
                        .send(Outgoing::say(json!({"type": "lobby", "waiting": waiting})));
                }
            }
        });
    }
}
