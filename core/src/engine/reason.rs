//! Why a conversation is routed: read by the routing, written to the match
//! log and kept with a queued conversation.

use crate::config::rules::Channel;

/// Why a conversation is routed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Its first customer message.
    New,
    /// `DONE` → `UNREAD`.
    Reopened,
    /// A waiting message had no answer in time.
    NoAnswer,
    /// The assigned agent went offline.
    AgentOffline,
    /// A queue's wait ended.
    QueueTimeout,
    /// The visitor asked for a video call.
    CallRequested,
}

impl Reason {
    /// The match log's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::New => "NEW",
            Reason::Reopened => "REOPENED",
            Reason::NoAnswer => "NO_ANSWER",
            Reason::AgentOffline => "AGENT_OFFLINE",
            Reason::QueueTimeout => "QUEUE_TIMEOUT",
            Reason::CallRequested => "CALL_REQUESTED",
        }
    }

    /// The rules it tries: those for calls when a call was asked for.
    pub(super) fn channel(self) -> Channel {
        if self == Reason::CallRequested {
            Channel::Call
        } else {
            Channel::Chat
        }
    }

    /// The agent to pass over: the one who did not answer or went offline.
    pub(super) fn passes_over(self) -> bool {
        matches!(self, Reason::NoAnswer | Reason::AgentOffline)
    }
}
