//! In-process fan-out of what changed, for the screens that show it live: the
//! visitor widget (messages to its customer) and the agents' inbox.
//!
//! Subscribers get every event of the instance and keep what concerns them; a
//! subscriber that falls behind loses the oldest events (`broadcast` semantics) and
//! catches up from storage, which stays the source of truth.

use tokio::sync::broadcast;

use crate::{
    conversations::{Conversation, Message},
    customers::Customer,
};

/// What changed.
#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// A message was stored (either direction).
    Message(Message),
    /// A conversation changed status.
    Conversation(Conversation),
    /// A customer was assigned, reassigned or unassigned.
    Assigned(Customer),
}

/// A change, with the tenant and customer it belongs to.
#[derive(Debug, Clone)]
pub struct LiveUpdate {
    /// Tenant of the change.
    pub tenant_id: String,
    /// The customer (conversation) it concerns.
    pub customer_id: String,
    /// What changed.
    pub event: LiveEvent,
}

/// The hub: one broadcast channel per instance.
#[derive(Debug, Clone)]
pub struct LiveHub {
    sender: broadcast::Sender<LiveUpdate>,
}

impl Default for LiveHub {
    fn default() -> Self {
        LiveHub {
            sender: broadcast::channel(1024).0,
        }
    }
}

impl LiveHub {
    /// Publishes a change; without subscribers it is dropped.
    pub fn publish(&self, update: LiveUpdate) {
        let _ = self.sender.send(update);
    }

    /// A new subscription to every later change.
    pub fn subscribe(&self) -> broadcast::Receiver<LiveUpdate> {
        self.sender.subscribe()
    }
}
