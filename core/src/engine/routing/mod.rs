//! Which routing rule matches a conversation, and what it does: pure functions over a
//! snapshot ([`Situation`]), so that every rule of evaluation is table-tested without
//! a database.
//!
//! Evaluation (documented in the README, "Routing"):
//! - Active rules are tried in their explicit order (`priority`, then name). Only rules
//!   whose `types` include the conversation's channel are tried.
//! - A rule matches when all its conditions hold (a rule without conditions always
//!   matches). When it does not, its `elseRules` are tried in order, recursively; the
//!   first one that matches acts in its place.
//! - The first top-level rule that matches (itself or through an else-rule) decides;
//!   later rules are not tried.
//! - The matching rule's actions run in order. `ROUTING_TO` runs the named rule in
//!   place (its conditions, then its else-rules), and its actions join the plan. A
//!   rule already on the path is not run again, so chains cannot loop.
//! - Only the first `QUEUE` of a plan queues; later ones are recorded as skipped.

use std::collections::{HashMap, HashSet};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::config::opening_hours::schedule::Schedule;
use crate::config::rules::{Action, AgentState, Channel, Condition, QueueTarget, RoutingRule, TagMatch, TagSource};

/// How deep `ROUTING_TO` chains may go (rules also refuse cycles when saved).
const MAX_CHAIN: usize = 16;

/// What the engine knows about a conversation when it decides.
#[derive(Debug, Clone)]
pub struct Situation<'a> {
    /// Chat or call.
    pub channel: Channel,
    /// The customer's id.
    pub customer_id: &'a str,
    /// The customer's external id.
    pub external_id: Option<&'a str>,
    /// The customer's tags, set by agents and integrations.
    pub tags: &'a [String],
    /// The tags the visitor's page set.
    pub page_tags: &'a [String],
    /// The page the visitor is on.
    pub url: Option<&'a str>,
    /// Seconds the oldest unanswered customer message has waited; `None` when
    /// nothing waits.
    pub waiting_seconds: Option<i64>,
    /// Now.
    pub now: DateTime<Utc>,
    /// Opening hours by id (those the rules name).
    pub hours: &'a HashMap<String, Schedule>,
}

/// Whether `condition` holds in `s`.
pub fn condition_holds(condition: &Condition, s: &Situation<'_>) -> bool {
    match condition {
        Condition::HasId { ids } => ids
            .iter()
            .any(|id| id == s.customer_id || Some(id.as_str()) == s.external_id),
        Condition::HasTag { tags, mode, source } => {
            let sets: &[&[String]] = match source {
                TagSource::Any => &[s.tags, s.page_tags],
                TagSource::Trusted => &[s.tags],
                TagSource::Page => &[s.page_tags],
            };
            let has = |t: &String| {
                sets.iter()
                    .flat_map(|set| set.iter())
                    .any(|own| own.eq_ignore_ascii_case(t))
            };
            match mode {
                TagMatch::Any => tags.iter().any(has),
                TagMatch::All => tags.iter().all(has),
            }
        }
        Condition::NoAnswer { seconds } => s.waiting_seconds.is_some_and(|w| w >= *seconds),
        Condition::OpeningHour {
            opening_hours_id,
            inside,
        } => {
            // Unknown hours (deleted meanwhile) are never open.
            let open = s.hours.get(opening_hours_id).is_some_and(|h| h.is_open(s.now));
            open == *inside
        }
        Condition::UrlRouting { urls } => s.url.is_some_and(|url| urls.iter().any(|p| url_matches(p, url))),
    }
}

/// Whether `url` matches `pattern`: `*` matches any run of characters (also none),
/// and every other character matches itself, case-sensitively, as written.
pub fn url_matches(pattern: &str, url: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == url;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !url.starts_with(first) || url.len() < first.len() + last.len() || !url.ends_with(last) {
        return false;
    }
    let mut rest = &url[first.len()..url.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Where a rule sits: a top-level rule's id, then the indexes of else-rules down to
/// it. Written `id` or `id/0/2`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RulePath {
    /// The top-level rule.
    pub rule_id: String,
    /// Indexes into `elseRules`, level by level.
    pub else_path: Vec<usize>,
}

impl RulePath {
    /// A top-level rule.
    pub fn top(rule_id: &str) -> RulePath {
        RulePath {
            rule_id: rule_id.to_string(),
            else_path: Vec::new(),
        }
    }

    fn child(&self, index: usize) -> RulePath {
        let mut path = self.clone();
        path.else_path.push(index);
        path
    }

    /// Parses the written form.
    pub fn parse(s: &str) -> Option<RulePath> {
        let mut parts = s.split('/');
        let rule_id = parts.next().filter(|id| !id.is_empty())?.to_string();
        let else_path = parts.map(|p| p.parse().ok()).collect::<Option<Vec<usize>>>()?;
        Some(RulePath { rule_id, else_path })
    }

    /// The rule at this path among `rules`.
    pub fn resolve<'r>(&self, rules: &'r [RoutingRule]) -> Option<&'r RoutingRule> {
        let mut rule = rules.iter().find(|r| r.meta.id.as_deref() == Some(&self.rule_id))?;
        for i in &self.else_path {
            rule = rule.else_rules.get(*i)?;
        }
        Some(rule)
    }
}

impl std::fmt::Display for RulePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.rule_id)?;
        for i in &self.else_path {
            write!(f, "/{i}")?;
        }
        Ok(())
    }
}

/// One rule the engine tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tried {
    /// Where the rule sits (written form of [`RulePath`]).
    pub path: String,
    /// Its name.
    pub name: String,
    /// Whether its conditions held.
    pub matched: bool,
}

/// An action the engine plans, with the rule it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Planned {
    /// Offer the conversation to agents of `target`.
    Queue {
        /// The rule whose else-rules decide when the wait ends.
        from: RulePath,
        /// Who may take it.
        target: QueueTarget,
        /// The state they must be in.
        agent_state: AgentState,
        /// Longest wait.
        max_wait_seconds: i64,
    },
    /// Send a system message.
    SystemMessage {
        /// Its id.
        id: String,
    },
    /// Send a flow.
    SendFlow {
        /// Its id.
        id: String,
    },
}

/// The engine's decision.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// Every rule tried, in order.
    pub tried: Vec<Tried>,
    /// The rule that matched and decided.
    pub matched: Option<RulePath>,
    /// Names from the matching top-level rule down to the rule that matched.
    pub matched_names: Vec<String>,
    /// What to do, in order.
    pub plan: Vec<Planned>,
    /// Actions not carried out, and why (a second `QUEUE`, a rule on the path again).
    pub skipped: Vec<String>,
}

/// Tries `rules` (the tenant's active rules, in their order) for `s`.
pub fn decide(rules: &[RoutingRule], s: &Situation<'_>) -> Decision {
    let mut decision = Decision::default();
    for rule in rules {
        let Some(id) = rule.meta.id.as_deref() else {
            continue;
        };
        let mut walk = Walk {
            all: rules,
            s,
            decision: &mut decision,
            on_path: HashSet::new(),
        };
        if let Some((path, names)) = walk.try_rule(rule, RulePath::top(id), Vec::new(), 0) {
            decision.matched = Some(path);
            decision.matched_names = names;
            break;
        }
    }
    decision
}

/// Tries the else-rules of the rule at `from` (a queue's wait ended): the first one
/// that matches decides.
pub fn decide_else(rules: &[RoutingRule], from: &RulePath, s: &Situation<'_>) -> Decision {
    let mut decision = Decision::default();
    let Some(rule) = from.resolve(rules) else {
        return decision;
    };
    let names = vec![rule.name.clone().unwrap_or_default()];
    for (i, nested) in rule.else_rules.iter().enumerate() {
        let mut walk = Walk {
            all: rules,
            s,
            decision: &mut decision,
            on_path: HashSet::from([from.rule_id.clone()]),
        };
        if let Some((path, names)) = walk.try_rule(nested, from.child(i), names.clone(), 0) {
            decision.matched = Some(path);
            decision.matched_names = names;
            break;
        }
    }
    decision
}

struct Walk<'a, 'd> {
    all: &'a [RoutingRule],
    s: &'a Situation<'a>,
    decision: &'d mut Decision,
    /// Top-level rules being run, so that `ROUTING_TO` never re-enters one.
    on_path: HashSet<String>,
}

impl Walk<'_, '_> {
    /// Tries `rule` (at `path`); when it or one of its else-rules matches, plans its
    /// actions and returns where the match is and the names leading to it.
    fn try_rule(
        &mut self,
        rule: &RoutingRule,
        path: RulePath,
        mut names: Vec<String>,
        depth: usize,
    ) -> Option<(RulePath, Vec<String>)> {
        // A rule switched off (`active: false`; top-level ones are not even
        // read) is not tried, nor are the else-rules under it.
        if !rule.types.contains(&self.s.channel) || rule.active == Some(false) {
            return None;
        }
        names.push(rule.name.clone().unwrap_or_default());
        let matched = rule.conditions.iter().all(|c| condition_holds(c, self.s));
        self.decision.tried.push(Tried {
            path: path.to_string(),
            name: rule.name.clone().unwrap_or_default(),
            matched,
        });
        if matched {
            self.on_path.insert(path.rule_id.clone());
            self.plan(rule, &path, depth);
            return Some((path, names));
        }
        for (i, nested) in rule.else_rules.iter().enumerate() {
            if let Some(found) = self.try_rule(nested, path.child(i), names.clone(), depth) {
                return Some(found);
            }
        }
        None
    }

    fn plan(&mut self, rule: &RoutingRule, path: &RulePath, depth: usize) {
        for action in &rule.actions {
            match action {
                Action::Queue {
                    target,
                    agent_state,
                    max_wait_seconds,
                } => {
                    if self.decision.plan.iter().any(|p| matches!(p, Planned::Queue { .. })) {
                        self.decision.skipped.push(format!(
                            "QUEUE to {} {}: already queued",
                            target_kind(target),
                            target.value
                        ));
                    } else {
                        self.decision.plan.push(Planned::Queue {
                            from: path.clone(),
                            target: target.clone(),
                            agent_state: *agent_state,
                            max_wait_seconds: *max_wait_seconds,
                        });
                    }
                }
                Action::SystemMessage { system_message_id } => self.decision.plan.push(Planned::SystemMessage {
                    id: system_message_id.clone(),
                }),
                Action::SendFlow { flow_id } => self.decision.plan.push(Planned::SendFlow { id: flow_id.clone() }),
                Action::RoutingTo { rule_id } => {
                    let target = self.all.iter().find(|r| r.meta.id.as_deref() == Some(rule_id.as_str()));
                    match target {
                        None => self
                            .decision
                            .skipped
                            .push(format!("ROUTING_TO {rule_id}: the rule is not active")),
                        Some(_) if self.on_path.contains(rule_id) || depth >= MAX_CHAIN => self
                            .decision
                            .skipped
                            .push(format!("ROUTING_TO {rule_id}: already on this path")),
                        Some(next) => {
                            let _ = self.try_rule(next, RulePath::top(rule_id), Vec::new(), depth + 1);
                        }
                    }
                }
            }
        }
    }
}

/// `USER`, `TEAM` or `TAG`.
pub(crate) fn target_kind(target: &QueueTarget) -> &'static str {
    match target.kind {
        crate::config::rules::QueueTargetType::User => "USER",
        crate::config::rules::QueueTargetType::Team => "TEAM",
        crate::config::rules::QueueTargetType::Tag => "TAG",
    }
}

#[cfg(test)]
mod tests;
