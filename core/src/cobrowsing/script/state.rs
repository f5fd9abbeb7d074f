//! What a script co-browse is: its state, the co-browse as the agent's live
//! view reads it, and what the visitor's page is told.

use serde::{Deserialize, Serialize};

/// The state of a script co-browse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ScriptState {
    /// The agent asked; the visitor has not answered.
    Requested,
    /// The visitor accepted: the agent's pointer shows on the visitor's page.
    Active,
    /// The visitor declined.
    Declined,
    /// One side ended it.
    Ended,
}

impl ScriptState {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ScriptState::Requested => "REQUESTED",
            ScriptState::Active => "ACTIVE",
            ScriptState::Declined => "DECLINED",
            ScriptState::Ended => "ENDED",
        }
    }

    pub(super) fn parse(s: &str) -> ScriptState {
        match s {
            "REQUESTED" => ScriptState::Requested,
            "ACTIVE" => ScriptState::Active,
            "DECLINED" => ScriptState::Declined,
            _ => ScriptState::Ended,
        }
    }

    /// Whether the co-browse still goes on (asked or accepted).
    pub fn open(self) -> bool {
        matches!(self, ScriptState::Requested | ScriptState::Active)
    }
}

/// The latest script co-browse of a recorded session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptCobrowse {
    /// Its id.
    pub id: String,
    /// Where it stands.
    pub state: ScriptState,
    /// Whether the visitor lets the agent click and type now.
    pub control: bool,
    /// The agent who asked.
    pub agent_user_id: Option<String>,
    /// The agent's name as the visitor sees it.
    pub agent_name: String,
    /// When the agent's live view was last there (its request, before that).
    pub agent_seen_at: i64,
}

impl ScriptCobrowse {
    /// What the agent's live view hears: `{"state": "active", "control":
    /// false, "agentId": …}`. Only the live view of that agent is told.
    pub fn agent_view(&self) -> String {
        serde_json::json!({
            "state": self.state.as_str().to_lowercase(),
            "control": self.control,
            "agentId": self.agent_user_id,
        })
        .to_string()
    }

    /// Whether `user_id` is the agent co-browsing.
    pub fn is_agent(&self, user_id: &str) -> bool {
        self.agent_user_id.as_deref() == Some(user_id)
    }
}

/// What the visitor does with a script co-browse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VisitorAction {
    /// Accept the agent's request.
    Accept,
    /// Decline it.
    Decline,
    /// Let the agent click and type.
    Grant,
    /// Take control back.
    Revoke,
    /// End the co-browse.
    End,
}

/// The visitor script's answer to a co-browse request, or its end.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
pub struct VisitorCobrowse {
    /// `accept` or `decline` the agent's request; `grant` the agent control
    /// (click and type) or `revoke` it; `end` the co-browse.
    #[serde(rename = "type")]
    #[schema(required = true)]
    pub action: VisitorAction,
}

/// What the visitor's page hears when its control stream (re)connects while
/// a co-browse is asked for or going on: the request again, or where it
/// stands (`{"type": "active", "agent": …, "control": …}`), so that the next
/// page of a site carries on.
pub fn visitor_resume(cobrowse: &ScriptCobrowse) -> Option<String> {
    match cobrowse.state {
        ScriptState::Requested => {
            Some(serde_json::json!({"type": "request", "agent": cobrowse.agent_name}).to_string())
        }
        ScriptState::Active => Some(
            serde_json::json!({"type": "active", "agent": cobrowse.agent_name, "control": cobrowse.control})
                .to_string(),
        ),
        _ => None,
    }
}
