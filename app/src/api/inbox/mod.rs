//! The agents' inbox (agents and up): conversations by status, a thread, reply,
//! assignment, status and the customer's tags, over the same services as `/rest/v1/conversation` and
//! `/rest/v1/message`. Live updates arrive through `GET /inbox/events` (see the
//! server's `http::inbox_events`). Each conversation also says which routing rule
//! sent it where (the match log, see [`super::routing_log`]) and, while it waits,
//! its SLA deadline.

mod actions;
mod reads;

pub use actions::{
    inbox_assign, inbox_call, inbox_note, inbox_read, inbox_reply, inbox_status, inbox_tags, inbox_typing, InboxAssign,
    InboxCall, InboxNote, InboxRead, InboxReply, InboxStatus, InboxTags, InboxTyping,
};
pub use reads::{inbox_assignees, inbox_list, inbox_thread, InboxAssignees, InboxList, InboxThread};
use serde::{Deserialize, Serialize};

/// Where the inbox lives.
pub const INBOX_PATH: &str = "/inbox";

/// Conversations listed per status tab.
pub const INBOX_LIMIT: i64 = 100;

/// The most conversations a tab shows, after "Show older conversations".
pub const INBOX_MOST_SHOWN: i64 = 900;

/// Messages of a thread shown, the newest ones.
pub const THREAD_LIMIT: i64 = 100;

/// A conversation in the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxRow {
    /// The customer.
    pub customer_id: String,
    /// How the customer is called.
    pub name: String,
    /// `UNREAD`, `UNRESOLVED` or `DONE`.
    pub status: String,
    /// The last message's text.
    pub last_text: String,
    /// When it last moved, `YYYY-MM-DD HH:MM` UTC.
    pub last_active: String,
    /// Customer messages since the last reply.
    pub waiting: i64,
    /// The assignee's name (a user's, else a team's), if any.
    pub assignee: Option<String>,
    /// The routing rule that last routed it (names joined by `›`), if one matched.
    pub routed_by: Option<String>,
    /// The earliest running SLA deadline of a waiting conversation, unix ms.
    pub sla_due_ms: Option<i64>,
}

/// The list for one tab, with every tab's count.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxView {
    /// Conversations per status: unread, unresolved, done.
    pub counts: [i64; 3],
    /// The tab's conversations, most recently active first.
    pub rows: Vec<InboxRow>,
    /// Whether older conversations exist beyond these.
    pub more: bool,
    /// When the server read the list, unix ms: the SLA countdowns start from it,
    /// so that the page renders the same on the server and in the browser.
    pub now_ms: i64,
}

/// One message of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageView {
    /// Id.
    pub id: String,
    /// From the customer.
    pub inbound: bool,
    /// `MESSAGE`, `AUDIO`, `VIDEO`, `FILE` or `CARD`.
    pub kind: String,
    /// Text or caption.
    pub text: Option<String>,
    /// Media or file URL.
    pub url: Option<String>,
    /// A card's button.
    pub button: Option<(String, String)>,
    /// Who wrote it, as shown.
    pub sender: String,
    /// `YYYY-MM-DD HH:MM` UTC.
    pub at: String,
    /// When it was stored, unix ms: compared with the other side's read mark.
    pub at_ms: i64,
}

/// A private note of a thread: only agents see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteView {
    /// Id.
    pub id: String,
    /// The text.
    pub text: String,
    /// Who wrote it, as shown.
    pub author: String,
    /// `YYYY-MM-DD HH:MM` UTC.
    pub at: String,
    /// When it was written, unix ms: where it goes among the messages.
    pub at_ms: i64,
    /// Whether it mentions the signed-in agent.
    pub mentions_me: bool,
}

/// A conversation opened in the inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadView {
    /// The customer.
    pub customer_id: String,
    /// How the customer is called.
    pub name: String,
    /// The customer's e-mail.
    pub email: Option<String>,
    /// Status.
    pub status: String,
    /// The visitor's rating of this (closed) conversation: 1–5 and the
    /// comment, if any.
    pub csat: Option<(i64, Option<String>)>,
    /// `user:<id>`, `team:<id>` or empty: the assignment picker's value.
    pub assigned: String,
    /// The customer's tags, set by agents and integrations.
    pub tags: Vec<String>,
    /// The tags the visitor's page set (read-only here).
    pub page_tags: Vec<String>,
    /// Whether the site signed the customer's identity.
    pub identity_verified: bool,
    /// What the visitor said of itself without a signature, as
    /// `(what, value)`: only claims.
    pub claims: Vec<(String, String)>,
    /// The page the visitor was last on.
    pub page_url: Option<String>,
    /// The customer's language (BCP 47).
    pub language: Option<String>,
    /// Why it went where it went: the decision that last routed it.
    pub routing: Option<crate::api::routing_log::RoutingLine>,
    /// Its routing decisions, newest first (at most
    /// [`crate::api::routing_log::CONVERSATION_ROUTING_SHOWN`]).
    pub routing_history: Vec<crate::api::routing_log::RoutingLine>,
    /// Oldest first; at most [`THREAD_LIMIT`], the newest.
    pub messages: Vec<MessageView>,
    /// Messages older than those shown.
    pub earlier: i64,
    /// The private notes written since the oldest message shown, oldest first.
    pub notes: Vec<NoteView>,
    /// The customer's latest recorded session on the website, to watch live
    /// or replay.
    pub recording: Option<String>,
    /// The visitor has seen the messages created up to this time, unix ms.
    pub visitor_read_ms: Option<i64>,
    /// The agents have seen the messages created up to this time, unix ms.
    pub agent_read_ms: Option<i64>,
}

/// Who a conversation can be assigned to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignees {
    /// The signed-in user's id ("Assign to me").
    pub me: String,
    /// Whether the signed-in user is an admin (who may export a customer's data).
    pub admin: bool,
    /// `(id, name)` of each user.
    pub users: Vec<(String, String)>,
    /// `(id, name)` of each team.
    pub teams: Vec<(String, String)>,
}
