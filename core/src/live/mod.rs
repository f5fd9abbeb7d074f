//! Fan-out of what changed, for the screens that show it live: the visitor
//! widget (messages to its customer), the agents' inbox, each user's
//! notifications (the dashboard's bell), and recorded sessions' live views
//! (new batches for viewers, a new viewer for the visitor script).
//!
//! Within an instance it is a hub of rooms ([`rooms`]): a subscriber names
//! what it hears (a tenant's inbox, one customer's widget, one recorded
//! session, the calls) and gets only that. One that falls behind is told to
//! resync and catches up from storage, which stays the source of truth.
//!
//! Several instances share one PostgreSQL database. Each change is then also
//! announced with `NOTIFY` as the transaction that makes it commits
//! ([`Tx::notify_after_commit`]: just after, never for a write that did not
//! commit); every instance listens ([`Services::relay_live_changes`])
//! and publishes what the others announced to its own subscribers. An
//! announcement names the change, as a [`LiveEvent`] does (a payload is
//! limited to 8,000 bytes, a message is not). SQLite
//! has one instance per file, so nothing is announced there.

mod rooms;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use rooms::{Room, Subscription};

use crate::{
    db::{Db, Tx},
    error::CoreResult,
    ids::{AppointmentId, CustomerId, MessageId, TenantId, UserId},
    Services,
};

/// The `NOTIFY` channel instances announce changes on.
const CHANNEL: &str = "rapport_live";

/// What changed: ids and small facts, never rows. A screen that shows the
/// object reads it from storage, which stays the one source of truth, so that
/// this module knows no domain type and a room's queue holds no copies of rows.
#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// A message of the update's customer was stored (either direction).
    Message {
        /// The message.
        message_id: MessageId,
    },
    /// A private note was written in the update's customer's conversation:
    /// only the tenant's agents hear it, never the visitor's widget.
    Note {
        /// The note.
        note_id: String,
    },
    /// The update's customer's conversation changed status.
    Conversation,
    /// The update's customer was assigned, reassigned or unassigned.
    Assigned,
    /// A notification was written for one user of the tenant (published with
    /// an empty customer): only that user's screens hear it.
    Notification {
        /// The user it is for.
        user_id: UserId,
    },
    /// A batch of a recorded session's events was stored (published with an
    /// empty customer): its live viewers read it.
    RecordingChunk {
        /// The recorded session.
        session_id: String,
        /// The batch's number.
        seq: i64,
    },
    /// A live viewer started (or goes on) watching a recorded session
    /// (published with an empty customer): its visitor script streams.
    RecordingWatched {
        /// The recorded session.
        session_id: String,
    },
    /// A recorded session ended (quiet for [`crate::recordings::SESSION_IDLE_MS`])
    /// and takes no more batches (published with an empty customer): its live
    /// viewers say so.
    RecordingEnded {
        /// The recorded session.
        session_id: String,
    },
    /// An appointment's recording switch was set (published with an empty
    /// customer): the instance holding its conference starts or stops
    /// recording it.
    AppointmentRecording {
        /// The appointment.
        appointment_id: AppointmentId,
        /// Whether it is recorded now.
        record: bool,
    },
    /// A script co-browse message (published with an empty customer): to the
    /// visitor's page (`to_visitor`: the agent's pointer, a click, a request),
    /// or to the agents' live views of the session (its state, as JSON).
    Cobrowse {
        /// The recorded session.
        session_id: String,
        /// Whether it goes to the visitor's page (else to the agents).
        to_visitor: bool,
        /// The message, as JSON.
        data: String,
    },
    /// Someone is typing in the update's customer's conversation, or stopped:
    /// nothing is stored. From the visitor (`by_visitor`), the agents hear it,
    /// with the draft unless the workspace keeps drafts to the visitor; from
    /// an agent, the visitor and the other agents hear it, with the agent's name.
    Typing {
        /// Whether the visitor types (else an agent or an integration).
        by_visitor: bool,
        /// The typing agent, so that their own screens can leave it out.
        user_id: Option<UserId>,
        /// The name the other side is shown.
        name: Option<String>,
        /// The visitor's draft so far (the end of it).
        draft: Option<String>,
        /// Typing (true) or stopped (false).
        active: bool,
    },
    /// One side of the update's customer's conversation has read it up to a
    /// message: every message created at or before `up_to_ms`.
    Read {
        /// Whether the visitor read (else an agent).
        by_visitor: bool,
        /// The creation time of the newest message read, in ms.
        up_to_ms: i64,
    },
    /// Changes may have been missed (another instance's, while the connection
    /// that hears them was being remade): screens should read everything
    /// again. Published with an empty tenant and customer: it concerns all.
    Resync,
}

/// A change, with the tenant and customer it belongs to.
#[derive(Debug, Clone)]
pub struct LiveUpdate {
    /// Tenant of the change.
    pub tenant_id: TenantId,
    /// The customer (conversation) it concerns; empty (`CustomerId::default()`)
    /// for a change that concerns no one customer (a notification, an
    /// appointment, a recording) or all of them (`Resync`).
    pub customer_id: CustomerId,
    /// What changed.
    pub event: LiveEvent,
}

/// The instance's live changes, delivered by room.
#[derive(Debug, Clone)]
pub struct LiveHub {
    rooms: rooms::RoomHub,
    /// This instance's name in announcements, so it skips its own.
    origin: Arc<str>,
}

impl Default for LiveHub {
    fn default() -> Self {
        LiveHub {
            rooms: rooms::RoomHub::default(),
            origin: Arc::from(uuid::Uuid::new_v4().to_string()),
        }
    }
}

/// What an instance announces of a change: which object changed, not the object.
#[derive(Debug, Serialize, Deserialize)]
struct Announcement {
    origin: String,
    tenant: TenantId,
    customer: CustomerId,
    #[serde(flatten)]
    changed: Changed,
}

/// Which object changed, by kind.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Changed {
    /// A stored message, by id.
    Message { id: MessageId },
    /// A stored private note, by id.
    Note { id: String },
    /// The customer's conversation status.
    Conversation,
    /// The customer's assignment.
    Assigned,
    /// A notification for a user; nothing to read back, the screen asks for
    /// its own count.
    Notification { user: UserId },
    /// A stored batch of a recorded session; viewers read it from storage.
    Recording { session: String, seq: i64 },
    /// A live viewer watches a recorded session.
    Watched { session: String },
    /// A recorded session ended.
    Ended { session: String },
    /// An appointment's recording switch.
    Record { appointment: AppointmentId, on: bool },
    /// A script co-browse message, carried whole (a few hundred bytes).
    Cobrowse {
        session: String,
        to_visitor: bool,
        data: String,
    },
    /// Typing, carried whole (a draft is at most
    /// [`crate::conversations::MAX_DRAFT`] characters).
    Typing {
        visitor: bool,
        user: Option<UserId>,
        name: Option<String>,
        draft: Option<String>,
        active: bool,
    },
    /// A read mark.
    Read { visitor: bool, up_to: i64 },
}

impl LiveHub {
    /// Publishes a change to the rooms it concerns; without subscribers there
    /// it is dropped.
    pub fn publish(&self, update: LiveUpdate) {
        self.rooms.publish(update);
    }

    /// A new subscription to the later changes of `room`.
    pub fn subscribe(&self, room: Room) -> Subscription {
        self.rooms.subscribe(room)
    }

    /// Rooms somebody listens to on this instance.
    pub fn open_rooms(&self) -> usize {
        self.rooms.open_rooms()
    }
}

impl Services {
    /// Commits a change and tells the live screens: this instance's at once,
    /// and on PostgreSQL every other instance's, through a `NOTIFY` sent as the
    /// transaction commits (see the module doc).
    pub(crate) async fn commit_live(
        &self,
        mut tx: Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        event: LiveEvent,
    ) -> CoreResult<()> {
        self.announce_live(&mut tx, tenant_id, customer_id, &event).await?;
        tx.commit().await?;
        self.after_commit(tenant_id, customer_id, event);
        Ok(())
    }

    /// On PostgreSQL, announces a change to the other instances with a `NOTIFY`
    /// sent once `tx` commits, so heard only if it does. The caller publishes it
    /// to this instance after the commit (`after_commit`). For a transaction that
    /// changes more than one thing screens show (a message that also gets the
    /// conversation assigned); [`Services::commit_live`] covers the usual one.
    pub(crate) async fn announce_live(
        &self,
        tx: &mut Tx,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        event: &LiveEvent,
    ) -> CoreResult<()> {
        let changed = match event {
            LiveEvent::Message { message_id } => Some(Changed::Message { id: message_id.clone() }),
            LiveEvent::Note { note_id } => Some(Changed::Note { id: note_id.clone() }),
            LiveEvent::Conversation => Some(Changed::Conversation),
            LiveEvent::Assigned => Some(Changed::Assigned),
            LiveEvent::Notification { user_id } => Some(Changed::Notification { user: user_id.clone() }),
            LiveEvent::RecordingChunk { session_id, seq } => Some(Changed::Recording {
                session: session_id.clone(),
                seq: *seq,
            }),
            LiveEvent::RecordingWatched { session_id } => Some(Changed::Watched {
                session: session_id.clone(),
            }),
            LiveEvent::RecordingEnded { session_id } => Some(Changed::Ended {
                session: session_id.clone(),
            }),
            LiveEvent::AppointmentRecording { appointment_id, record } => Some(Changed::Record {
                appointment: appointment_id.clone(),
                on: *record,
            }),
            LiveEvent::Cobrowse {
                session_id,
                to_visitor,
                data,
            } => Some(Changed::Cobrowse {
                session: session_id.clone(),
                to_visitor: *to_visitor,
                data: data.clone(),
            }),
            LiveEvent::Typing {
                by_visitor,
                user_id,
                name,
                draft,
                active,
            } => Some(Changed::Typing {
                visitor: *by_visitor,
                user: user_id.clone(),
                name: name.clone(),
                draft: draft.clone(),
                active: *active,
            }),
            LiveEvent::Read { by_visitor, up_to_ms } => Some(Changed::Read {
                visitor: *by_visitor,
                up_to: *up_to_ms,
            }),
            LiveEvent::Resync => None,
        };
        if let (true, Some(changed)) = (tx.notifies(), changed) {
            let announcement = Announcement {
                origin: self.live().origin.to_string(),
                tenant: tenant_id.clone(),
                customer: customer_id.clone(),
                changed,
            };
            let payload =
                serde_json::to_string(&announcement).map_err(|e| crate::CoreError::Internal(e.to_string()))?;
            tx.notify_after_commit(CHANNEL, payload);
        }
        Ok(())
    }

    /// Tells the live screens of every instance about something that changes
    /// nothing stored (a co-browse pointer): on PostgreSQL through a `NOTIFY` of
    /// its own, and on this instance at once.
    pub(crate) async fn signal_live(&self, update: LiveUpdate) -> CoreResult<()> {
        // One instance on SQLite: nobody else to tell.
        if let Db::Postgres(_) = self.db() {
            let mut tx = self.db().begin().await?;
            self.announce_live(&mut tx, &update.tenant_id, &update.customer_id, &update.event)
                .await?;
            tx.commit().await?;
        }
        self.live().publish(update);
        Ok(())
    }

    /// On PostgreSQL, hears what other instances announce and publishes it to
    /// this instance's subscribers. Runs until the
    /// listening connection fails for good (the caller starts it again); when
    /// that connection is remade, subscribers are told to resync. Returns at
    /// once on SQLite.
    pub async fn relay_live_changes(&self) -> CoreResult<()> {
        let Db::Postgres(pool) = self.db() else {
            return Ok(());
        };
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        listener.listen(CHANNEL).await?;
        loop {
            let Some(notification) = listener.try_recv().await? else {
                // The connection dropped; the next receive remakes it. What was
                // announced in between is lost.
                self.live().publish(LiveUpdate {
                    tenant_id: TenantId::default(),
                    customer_id: CustomerId::default(),
                    event: LiveEvent::Resync,
                });
                continue;
            };
            let Ok(heard) = serde_json::from_str::<Announcement>(notification.payload()) else {
                tracing::warn!("ignoring a malformed live announcement");
                continue;
            };
            if *heard.origin == *self.live().origin {
                continue;
            }
            let event = match &heard.changed {
                Changed::Message { id } => LiveEvent::Message { message_id: id.clone() },
                Changed::Note { id } => LiveEvent::Note { note_id: id.clone() },
                Changed::Conversation => LiveEvent::Conversation,
                Changed::Assigned => LiveEvent::Assigned,
                Changed::Notification { user } => LiveEvent::Notification { user_id: user.clone() },
                Changed::Recording { session, seq } => LiveEvent::RecordingChunk {
                    session_id: session.clone(),
                    seq: *seq,
                },
                Changed::Watched { session } => LiveEvent::RecordingWatched {
                    session_id: session.clone(),
                },
                Changed::Ended { session } => LiveEvent::RecordingEnded {
                    session_id: session.clone(),
                },
                Changed::Record { appointment, on } => LiveEvent::AppointmentRecording {
                    appointment_id: appointment.clone(),
                    record: *on,
                },
                Changed::Cobrowse {
                    session,
                    to_visitor,
                    data,
                } => LiveEvent::Cobrowse {
                    session_id: session.clone(),
                    to_visitor: *to_visitor,
                    data: data.clone(),
                },
                Changed::Typing {
                    visitor,
                    user,
                    name,
                    draft,
                    active,
                } => LiveEvent::Typing {
                    by_visitor: *visitor,
                    user_id: user.clone(),
                    name: name.clone(),
                    draft: draft.clone(),
                    active: *active,
                },
                Changed::Read { visitor, up_to } => LiveEvent::Read {
                    by_visitor: *visitor,
                    up_to_ms: *up_to,
                },
            };
            self.live().publish(LiveUpdate {
                tenant_id: heard.tenant,
                customer_id: heard.customer,
                event,
            });
        }
    }
}
