//! The match log as the dashboard shows it: each routing decision
//! ([`rapport_core::model::RoutingRecord`]) with names for ids, labels for codes
//! and times in the workspace's zone. The inbox says from it why a conversation
//! came to an agent, and each routing rule's page lists its recent matches.

use serde::{Deserialize, Serialize};

/// Decisions a rule's page lists.
pub const RULE_MATCHES_SHOWN: i64 = 50;

/// Decisions a conversation's routing history lists.
pub const CONVERSATION_ROUTING_SHOWN: i64 = 20;

/// One routing decision, ready to show.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoutingLine {
    /// When, `YYYY-MM-DD HH:MM` and the zone's abbreviation, in the workspace's zone.
    pub at: String,
    /// The conversation's customer.
    pub customer_id: String,
    /// The customer's name, where the view asked for it.
    pub customer: Option<String>,
    /// Why routing ran, in words (`new conversation`).
    pub reason: String,
    /// The rule that matched, from the top-level rule down to the else-rule that
    /// matched, joined by `›`; none when no rule matched.
    pub rules: Option<String>,
    /// What came of it, in words (`assigned`, `queued`…).
    pub result: String,
    /// The agent it went to.
    pub agent: Option<String>,
    /// What was done, in order, with users and teams by name.
    pub actions: Vec<String>,
    /// The rules tried, in order: name, and whether it matched.
    pub tried: Vec<(String, bool)>,
}

impl RoutingLine {
    /// `Routed by rule VIP › Overflow — new conversation — assigned to Ada`.
    pub fn summary(&self) -> String {
        match &self.rules {
            Some(rules) => format!("Routed by rule {rules} — {} — {}", self.reason, self.outcome()),
            None => format!("No routing rule matched — {}", self.reason),
        }
    }

    /// `assigned to Ada`, `queued`.
    pub fn outcome(&self) -> String {
        match &self.agent {
            Some(agent) if self.result == "assigned" => format!("assigned to {agent}"),
            Some(agent) => format!("{} ({agent})", self.result),
            None => self.result.clone(),
        }
    }
}

/// Why routing ran, in words.
pub fn reason_label(code: &str) -> String {
    match code {
        "NEW" => "new conversation".into(),
        "REOPENED" => "reopened".into(),
        "NO_ANSWER" => "no answer in time".into(),
        "AGENT_OFFLINE" => "agent went offline".into(),
        "QUEUE_TIMEOUT" => "queue wait ended".into(),
        "CALL_REQUESTED" => "video call asked for".into(),
        other => other.to_lowercase().replace('_', " "),
    }
}

/// What came of a decision, in words.
pub fn result_label(code: &str) -> String {
    match code {
        "ASSIGNED" => "assigned".into(),
        "QUEUED" => "queued".into(),
        "MESSAGED" => "messaged".into(),
        "MATCHED" => "matched, nothing to do".into(),
        "NO_MATCH" => "no rule matched".into(),
        other => other.to_lowercase().replace('_', " "),
    }
}

#[cfg(feature = "ssr")]
pub(crate) mod server {
    //! From the match log's records to [`RoutingLine`]s.

    use std::collections::{HashMap, HashSet};

    use chrono_tz::Tz;
    use rapport_core::{error::CoreResult, model::RoutingRecord, Services};

    use super::{reason_label, result_label, RoutingLine};

    /// Whether a word of an action looks like one of our ids (a UUID).
    fn id_like(word: &str) -> bool {
        word.len() == 36 && word.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
    }

    /// `text` with every known id replaced by its name.
    fn named(text: &str, names: &HashMap<String, String>) -> String {
        text.split(' ')
            .map(|word| {
                let (id, rest) = word.split_at(word.trim_end_matches([':', ',', '.']).len());
                match names.get(id) {
                    Some(name) => format!("{name}{rest}"),
                    None => word.to_string(),
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// The workspace's zone (UTC when it names none we know).
    pub(crate) async fn zone(services: &Services, tenant_id: &rapport_core::ids::TenantId) -> CoreResult<Tz> {
        Ok(services
            .get_tenant(tenant_id)
            .await?
            .timezone
            .parse()
            .unwrap_or(chrono_tz::UTC))
    }

    /// The records as lines, with the customers' names when `with_customers`.
    pub(crate) async fn lines(
        services: &Services,
        tenant_id: &rapport_core::ids::TenantId,
        records: Vec<RoutingRecord>,
        with_customers: bool,
    ) -> CoreResult<Vec<RoutingLine>> {
        if records.is_empty() {
            return Ok(Vec::new());
        }
        let zone = zone(services, tenant_id).await?;
        // Users and teams appear as agents and inside actions; one read each.
        let mut ids: HashSet<&str> = records.iter().filter_map(|r| r.user_id.as_deref()).collect();
        for r in &records {
            for action in &r.actions {
                ids.extend(
                    action
                        .split(' ')
                        .map(|w| w.trim_end_matches([':', ',', '.']))
                        .filter(|w| id_like(w)),
                );
            }
        }
        let ids: Vec<&str> = ids.into_iter().collect();
        let mut names = services.user_names(tenant_id, &ids).await?;
        if records.iter().any(|r| r.actions.iter().any(|a| a.contains(" TEAM "))) {
            names.extend(crate::api::teams::all_team_names(services, tenant_id).await?);
        }
        let mut customers: HashMap<String, String> = HashMap::new();
        if with_customers {
            for r in &records {
                if customers.contains_key(r.customer_id.as_str()) {
                    continue;
                }
                // A customer deleted since keeps its id as its name.
                let name = match services.get_customer(tenant_id, &r.customer_id).await {
                    Ok(c) => rapport_core::conversations::customer_name(&c),
                    Err(_) => r.customer_id.to_string(),
                };
                customers.insert(r.customer_id.to_string(), name);
            }
        }
        Ok(records
            .into_iter()
            .map(|r| RoutingLine {
                at: r.at.with_timezone(&zone).format("%Y-%m-%d %H:%M %Z").to_string(),
                customer: customers.get(r.customer_id.as_str()).cloned(),
                reason: reason_label(&r.reason),
                rules: (!r.rule_names.is_empty()).then(|| r.rule_names.join(" › ")),
                result: result_label(&r.result),
                agent: r
                    .user_id
                    .map(|u| names.get(u.as_str()).cloned().unwrap_or_else(|| u.into_string())),
                actions: r.actions.iter().map(|a| named(a, &names)).collect(),
                tried: r.tried.into_iter().map(|t| (t.name, t.matched)).collect(),
                customer_id: r.customer_id.into_string(),
            })
            .collect())
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn ids_in_actions_read_as_names() {
            let ada = "0196f0c2-7a1e-7c3a-9a51-2f6f5a0b1c2d";
            let desk = "0196f0c2-7a1e-7c3a-9a51-2f6f5a0b1c2e";
            let names: HashMap<String, String> = [
                (ada.to_string(), "Ada".to_string()),
                (desk.to_string(), "VIP desk".to_string()),
            ]
            .into();
            assert_eq!(
                named(&format!("QUEUE TEAM {desk}: assigned to {ada}"), &names),
                "QUEUE TEAM VIP desk: assigned to Ada"
            );
            assert_eq!(named("SYSTEM_MESSAGE m1 in de", &names), "SYSTEM_MESSAGE m1 in de");
            assert!(id_like(ada) && !id_like("assigned"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decision_reads_as_one_sentence() {
        let line = RoutingLine {
            reason: reason_label("NEW"),
            rules: Some("VIP › Overflow".into()),
            result: result_label("ASSIGNED"),
            agent: Some("Ada".into()),
            ..Default::default()
        };
        assert_eq!(
            line.summary(),
            "Routed by rule VIP › Overflow — new conversation — assigned to Ada"
        );
        let queued = RoutingLine {
            result: result_label("QUEUED"),
            agent: None,
            ..line.clone()
        };
        assert_eq!(queued.outcome(), "queued");
        let none = RoutingLine {
            rules: None,
            reason: reason_label("NO_ANSWER"),
            ..line
        };
        assert_eq!(none.summary(), "No routing rule matched — no answer in time");
    }
}
