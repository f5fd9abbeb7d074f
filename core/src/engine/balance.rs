//! Which agent of a queue's target takes a conversation: pure, over the candidates'
//! state, so balancing is table-tested without a database.
//!
//! - An agent takes a conversation only below their capacity (`maxConcurrentChats`,
//!   else the tenant's default), counting the open conversations (`UNREAD`,
//!   `UNRESOLVED`) assigned to them.
//! - The queue's `agentState` decides who is eligible: `AVAILABLE` is online with no
//!   open conversation; `ONLINE` is online; `ANY` is signed in to the dashboard,
//!   online or away. Nobody offline is ever given a conversation: it waits in the
//!   queue instead, so a reopened chat does not land with an agent who is gone.
//! - Among the eligible, the least busy agent takes it; ties go in turn, to the one
//!   whose last assignment is the oldest (never assigned first), then by id so that
//!   the choice is deterministic.

use crate::config::rules::AgentState;
use crate::ids::UserId;

/// An agent's dashboard status, as balancing sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Online.
    Online,
    /// Signed in but away.
    Away,
    /// Not signed in.
    Offline,
}

/// One agent of a queue's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The user's id.
    pub user_id: UserId,
    /// Open conversations assigned to them.
    pub load: i64,
    /// How many they may hold at once.
    pub capacity: i64,
    /// Their status.
    pub presence: Presence,
    /// When they were last given a conversation (unix ms).
    pub last_assigned_at: Option<i64>,
}

impl Candidate {
    /// Whether the candidate may take a conversation from a queue requiring `state`.
    pub fn eligible(&self, state: AgentState) -> bool {
        let present = match state {
            AgentState::Available => self.presence == Presence::Online && self.load == 0,
            AgentState::Online => self.presence == Presence::Online,
            AgentState::Any => self.presence != Presence::Offline,
        };
        present && self.load < self.capacity
    }
}

/// The candidate who takes the next conversation, if anyone can; `exclude` (the
/// agent who did not answer, or who went offline) is passed over.
pub fn pick<'c>(candidates: &'c [Candidate], state: AgentState, exclude: Option<&str>) -> Option<&'c Candidate> {
    candidates
        .iter()
        .filter(|c| c.eligible(state) && Some(c.user_id.as_str()) != exclude)
        .min_by(|a, b| {
            a.load
                .cmp(&b.load)
                .then(
                    a.last_assigned_at
                        .unwrap_or(i64::MIN)
                        .cmp(&b.last_assigned_at.unwrap_or(i64::MIN)),
                )
                .then(a.user_id.cmp(&b.user_id))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(id: &str, load: i64, capacity: i64, presence: Presence, last: Option<i64>) -> Candidate {
        Candidate {
            user_id: UserId::from(id),
            load,
            capacity,
            presence,
            last_assigned_at: last,
        }
    }

    #[test]
    fn eligibility_by_required_state_and_capacity() {
        use Presence::*;
        let table = [
            // (presence, load, capacity, AVAILABLE, ONLINE, ANY)
            (Online, 0, 3, true, true, true),
            (Online, 1, 3, false, true, true),
            (Online, 3, 3, false, false, false),
            (Away, 0, 3, false, false, true),
            (Away, 3, 3, false, false, false),
            (Offline, 0, 3, false, false, false),
        ];
        for (presence, load, capacity, available, online, any) in table {
            let c = agent("a", load, capacity, presence, None);
            assert_eq!(c.eligible(AgentState::Available), available, "{c:?}");
            assert_eq!(c.eligible(AgentState::Online), online, "{c:?}");
            assert_eq!(c.eligible(AgentState::Any), any, "{c:?}");
        }
    }

    #[test]
    fn the_least_busy_agent_takes_it() {
        let agents = [
            agent("a", 2, 5, Presence::Online, Some(1)),
            agent("b", 1, 5, Presence::Online, Some(9)),
            agent("c", 3, 5, Presence::Online, Some(0)),
        ];
        assert_eq!(pick(&agents, AgentState::Online, None).unwrap().user_id, "b");
    }

    #[test]
    fn ties_go_in_turn() {
        let agents = [
            agent("a", 1, 5, Presence::Online, Some(300)),
            agent("b", 1, 5, Presence::Online, Some(100)),
            agent("c", 1, 5, Presence::Online, Some(200)),
            agent("d", 1, 5, Presence::Online, None),
        ];
        assert_eq!(pick(&agents, AgentState::Online, None).unwrap().user_id, "d");
        assert_eq!(pick(&agents[..3], AgentState::Online, None).unwrap().user_id, "b");
    }

    /// Chatwoot #11034: assignment piles onto one agent. Simulated: 30 conversations
    /// to 3 idle agents end 10/10/10, each given in turn.
    #[test]
    fn a_stream_of_conversations_spreads_evenly() {
        let mut agents = vec![
            agent("a", 0, 20, Presence::Online, None),
            agent("b", 0, 20, Presence::Online, None),
            agent("c", 0, 20, Presence::Online, None),
        ];
        let mut order = Vec::new();
        for now in 0..30 {
            let id = pick(&agents, AgentState::Online, None).unwrap().user_id.clone();
            let chosen = agents.iter_mut().find(|a| a.user_id == id).unwrap();
            chosen.load += 1;
            chosen.last_assigned_at = Some(now);
            order.push(id);
        }
        assert!(agents.iter().all(|a| a.load == 10));
        assert_eq!(order[..6], ["a", "b", "c", "a", "b", "c"]);
    }

    #[test]
    fn nobody_when_all_are_full_offline_or_excluded() {
        let agents = [
            agent("a", 2, 2, Presence::Online, None),
            agent("b", 0, 2, Presence::Offline, None),
            agent("c", 0, 2, Presence::Online, None),
        ];
        assert_eq!(pick(&agents, AgentState::Any, Some("c")), None);
        assert_eq!(pick(&agents, AgentState::Any, None).unwrap().user_id, "c");
        assert_eq!(pick(&[], AgentState::Any, None), None);
    }
}
