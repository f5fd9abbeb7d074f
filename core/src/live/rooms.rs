//! The hub of rooms: each live screen hears only its own subject.
//!
//! A subscriber names a [`Room`] (a tenant's inbox, one customer's widget, one
//! recorded session, the instance's calls) and receives only the updates of
//! that room. Publishing an update costs a lookup per room it belongs to, and
//! wakes only that room's subscribers, so a thousand idle widget streams of one
//! shop cost its neighbours nothing, and a burst in one room cannot make
//! another room's subscribers fall behind.
//!
//! Each room is a small broadcast channel, made when its first subscriber
//! comes and dropped with its last. A subscriber that falls behind its room
//! gets [`LiveEvent::Resync`] in place of what it lost
//! ([`Subscription::recv`]), in one place for every screen: it then reads
//! storage again, which stays the source of truth.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use tokio::sync::broadcast::{self, error::RecvError};

use super::{LiveEvent, LiveUpdate};
use crate::ids::{CustomerId, TenantId};

/// What a live screen hears.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Room {
    /// A tenant's agents: every conversation's messages, statuses and
    /// assignments, and notifications (each screen keeps its user's).
    Inbox {
        /// The tenant.
        tenant_id: TenantId,
    },
    /// One customer's widget: the messages and status changes of their
    /// conversation.
    Widget {
        /// The tenant.
        tenant_id: TenantId,
        /// The customer.
        customer_id: CustomerId,
    },
    /// One recorded session: its batches, viewers, end and co-browse messages,
    /// for its live viewers and its visitor's script.
    Recording {
        /// The tenant.
        tenant_id: TenantId,
        /// The recorded session.
        session_id: String,
    },
    /// The conferences this instance holds, of any tenant: appointments'
    /// recording switches.
    Calls,
}

impl Room {
    /// Updates a room keeps for a subscriber that is slow to read: a tenant's
    /// inbox hears every conversation of the tenant, a widget one
    /// conversation's messages.
    fn capacity(&self) -> usize {
        match self {
            Room::Inbox { .. } => 256,
            Room::Widget { .. } => 16,
            Room::Recording { .. } | Room::Calls => 64,
        }
    }
}

impl LiveUpdate {
    /// The rooms that hear this update (every room, for a resync).
    fn rooms(&self) -> Vec<Room> {
        let inbox = || Room::Inbox {
            tenant_id: self.tenant_id.clone(),
        };
        let widget = || Room::Widget {
            tenant_id: self.tenant_id.clone(),
            customer_id: self.customer_id.clone(),
        };
        match &self.event {
            // The visitor's page shows messages, and asks for a rating once the
            // conversation is closed.
            LiveEvent::Message { .. } | LiveEvent::Conversation => vec![inbox(), widget()],
            LiveEvent::Assigned | LiveEvent::Notification { .. } | LiveEvent::Note { .. } => vec![inbox()],
            // A visitor's draft is for the agents alone; an agent typing, and
            // either side's read mark, both sides see.
            LiveEvent::Typing { by_visitor: true, .. } => vec![inbox()],
            LiveEvent::Typing { .. } | LiveEvent::Read { .. } => vec![inbox(), widget()],
            LiveEvent::RecordingChunk { session_id, .. }
            | LiveEvent::RecordingWatched { session_id }
            | LiveEvent::RecordingEnded { session_id }
            | LiveEvent::Cobrowse { session_id, .. } => vec![Room::Recording {
                tenant_id: self.tenant_id.clone(),
                session_id: session_id.clone(),
            }],
            LiveEvent::AppointmentRecording { .. } => vec![Room::Calls],
            LiveEvent::Resync => Vec::new(),
        }
    }
}

type Rooms = Arc<Mutex<HashMap<Room, broadcast::Sender<Arc<LiveUpdate>>>>>;

/// The instance's rooms.
#[derive(Debug, Clone, Default)]
pub(super) struct RoomHub {
    rooms: Rooms,
}

impl RoomHub {
    /// Delivers `update` to the subscribers of its rooms; a resync to every
    /// room. A room nobody listens to does not exist, so its updates cost a
    /// lookup.
    pub(super) fn publish(&self, update: LiveUpdate) {
        let update = Arc::new(update);
        let rooms = self.rooms.lock().expect("live rooms lock");
        if matches!(update.event, LiveEvent::Resync) {
            for sender in rooms.values() {
                let _ = sender.send(update.clone());
            }
            return;
        }
        for room in update.rooms() {
            if let Some(sender) = rooms.get(&room) {
                let _ = sender.send(update.clone());
            }
        }
    }

    /// A subscription to `room`, from now on.
    pub(super) fn subscribe(&self, room: Room) -> Subscription {
        let mut rooms = self.rooms.lock().expect("live rooms lock");
        let receiver = rooms
            .entry(room.clone())
            .or_insert_with(|| broadcast::channel(room.capacity()).0)
            .subscribe();
        Subscription {
            receiver,
            room,
            rooms: self.rooms.clone(),
        }
    }

    /// Rooms with at least one subscriber.
    pub(super) fn open_rooms(&self) -> usize {
        self.rooms.lock().expect("live rooms lock").len()
    }
}

/// One subscriber's place in a room. Dropping it leaves the room, and the last
/// to leave closes it.
#[derive(Debug)]
pub struct Subscription {
    receiver: broadcast::Receiver<Arc<LiveUpdate>>,
    room: Room,
    rooms: Rooms,
}

impl Subscription {
    /// The next update of the room. After falling behind, a
    /// [`LiveEvent::Resync`] stands for everything lost: read storage again.
    pub async fn recv(&mut self) -> Arc<LiveUpdate> {
        match self.receiver.recv().await {
            Ok(update) => update,
            Err(RecvError::Lagged(_)) => Arc::new(LiveUpdate {
                tenant_id: TenantId::default(),
                customer_id: CustomerId::default(),
                event: LiveEvent::Resync,
            }),
            // The room's sender lives in the hub while this subscription
            // does, so the channel cannot close under it.
            Err(RecvError::Closed) => std::future::pending().await,
        }
    }

    /// The room this subscription hears.
    pub fn room(&self) -> &Room {
        &self.room
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut rooms = self.rooms.lock().expect("live rooms lock");
        // This subscription's receiver is still counted until after `drop`.
        if rooms.get(&self.room).is_some_and(|s| s.receiver_count() <= 1) {
            rooms.remove(&self.room);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(tenant: &str, customer: &str, event: LiveEvent) -> LiveUpdate {
        LiveUpdate {
            tenant_id: tenant.into(),
            customer_id: customer.into(),
            event,
        }
    }

    fn watched(session: &str) -> LiveEvent {
        LiveEvent::RecordingWatched {
            session_id: session.into(),
        }
    }

    fn notification(user: &str) -> LiveEvent {
        LiveEvent::Notification { user_id: user.into() }
    }

    #[tokio::test]
    async fn each_room_hears_its_own_updates_only() {
        let hub = RoomHub::default();
        let mut a_inbox = hub.subscribe(Room::Inbox { tenant_id: "a".into() });
        let mut b_inbox = hub.subscribe(Room::Inbox { tenant_id: "b".into() });
        let mut recording = hub.subscribe(Room::Recording {
            tenant_id: "a".into(),
            session_id: "s1".into(),
        });
        hub.publish(update("b", "", notification("u2")));
        hub.publish(update("a", "", watched("s2")));
        hub.publish(update("a", "", watched("s1")));
        hub.publish(update("a", "", notification("u1")));
        assert!(matches!(&a_inbox.recv().await.event, LiveEvent::Notification { user_id } if user_id == "u1"));
        assert!(matches!(&b_inbox.recv().await.event, LiveEvent::Notification { user_id } if user_id == "u2"));
        assert!(
            matches!(&recording.recv().await.event, LiveEvent::RecordingWatched { session_id } if session_id == "s1")
        );
        // A resync reaches every room.
        hub.publish(update("", "", LiveEvent::Resync));
        for subscription in [&mut a_inbox, &mut b_inbox, &mut recording] {
            assert!(matches!(subscription.recv().await.event, LiveEvent::Resync));
        }
    }

    fn typing(by_visitor: bool, draft: &str) -> LiveEvent {
        LiveEvent::Typing {
            by_visitor,
            user_id: None,
            name: None,
            draft: Some(draft.into()),
            active: true,
        }
    }

    #[tokio::test]
    async fn a_visitors_draft_reaches_the_agents_and_never_another_widget() {
        let hub = RoomHub::default();
        let mut inbox = hub.subscribe(Room::Inbox { tenant_id: "a".into() });
        let widget = |customer: &str| Room::Widget {
            tenant_id: "a".into(),
            customer_id: customer.into(),
        };
        let mut own = hub.subscribe(widget("c1"));
        let mut other = hub.subscribe(widget("c2"));
        hub.publish(update("a", "c1", typing(true, "my card number is")));
        hub.publish(update("a", "c1", typing(false, "")));
        hub.publish(update(
            "a",
            "c1",
            LiveEvent::Read {
                by_visitor: false,
                up_to_ms: 7,
            },
        ));
        assert!(matches!(
            inbox.recv().await.event,
            LiveEvent::Typing { by_visitor: true, .. }
        ));
        assert!(matches!(
            inbox.recv().await.event,
            LiveEvent::Typing { by_visitor: false, .. }
        ));
        assert!(matches!(inbox.recv().await.event, LiveEvent::Read { .. }));
        // The visitor's widget hears the agent, not its own draft.
        assert!(matches!(
            own.recv().await.event,
            LiveEvent::Typing { by_visitor: false, .. }
        ));
        assert!(matches!(own.recv().await.event, LiveEvent::Read { up_to_ms: 7, .. }));
        hub.publish(update("a", "c2", LiveEvent::Resync));
        assert!(
            matches!(other.recv().await.event, LiveEvent::Resync),
            "c2 heard nothing of c1"
        );
    }

    #[tokio::test]
    async fn a_slow_subscriber_is_told_to_resync_and_rooms_close_with_their_last() {
        let hub = RoomHub::default();
        let room = Room::Recording {
            tenant_id: "a".into(),
            session_id: "s".into(),
        };
        let mut slow = hub.subscribe(room.clone());
        let other = hub.subscribe(room.clone());
        for _ in 0..room.capacity() + 1 {
            hub.publish(update("a", "", watched("s")));
        }
        assert!(
            matches!(slow.recv().await.event, LiveEvent::Resync),
            "what was lost is one resync"
        );
        assert!(matches!(slow.recv().await.event, LiveEvent::RecordingWatched { .. }));
        assert_eq!(hub.open_rooms(), 1);
        drop(other);
        assert_eq!(hub.open_rooms(), 1, "the room stays while anyone listens");
        drop(slow);
        assert_eq!(hub.open_rooms(), 0, "and closes with its last subscriber");
        // Updates of a room nobody hears go nowhere.
        hub.publish(update("a", "", watched("s")));
        assert_eq!(hub.open_rooms(), 0);
    }
}
