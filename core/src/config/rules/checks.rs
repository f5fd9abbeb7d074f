//! Checking a rule before it is stored: its conditions and actions, the
//! depth of its `else` branches, cycles between rules that route to each
//! other, and that everything it names (opening hours, system messages,
//! flows, rules, users, teams) exists in the tenant.

use super::*;

/// References collected while checking, resolved against storage afterwards.
#[derive(Default)]
pub(super) struct References {
    pub(super) opening_hours: Vec<(String, String)>,
    pub(super) system_messages: Vec<(String, String)>,
    pub(super) flows: Vec<(String, String)>,
    pub(super) rules: Vec<(String, String)>,
    pub(super) users: Vec<(String, String)>,
    pub(super) teams: Vec<(String, String)>,
}

pub(super) fn check_conditions(checks: &mut Checks, field: &str, conditions: &[Condition], refs: &mut References) {
    if conditions.len() > 50 {
        checks.push(field, "too_many", format!("{field} may hold at most 50 items"));
    }
    for (i, c) in conditions.iter().enumerate() {
        let at = format!("{field}[{i}]");
        match c {
            Condition::HasId { ids } => non_empty_strings(checks, &format!("{at}.ids"), ids, 100),
            Condition::HasTag { tags, .. } => checks.tags(&format!("{at}.tags"), tags, 50),
            Condition::NoAnswer { seconds } => checks.in_range(&format!("{at}.seconds"), *seconds, 1..=86_400),
            Condition::OpeningHour { opening_hours_id, .. } => refs
                .opening_hours
                .push((format!("{at}.openingHoursId"), opening_hours_id.clone())),
            Condition::UrlRouting { urls } => non_empty_strings(checks, &format!("{at}.urls"), urls, 50),
        }
    }
}

pub(super) fn non_empty_strings(checks: &mut Checks, field: &str, items: &[String], max: usize) {
    if items.is_empty() {
        checks.push(field, "required", format!("{field} needs at least one item"));
    }
    checks.unique_items(field, items, max, |checks, at, item| {
        if item.trim().is_empty() || item.len() > 2048 {
            checks.push(at, "invalid_value", format!("{at} must be 1 to 2048 characters"));
        }
    });
}

pub(super) fn check_rule(
    checks: &mut Checks,
    prefix: &str,
    rule: &mut RoutingRule,
    depth: usize,
    refs: &mut References,
) {
    let field = |name: &str| {
        if prefix.is_empty() {
            name.to_string()
        } else {
            format!("{prefix}.{name}")
        }
    };
    rule.name = Some(checks.required_text(&field("name"), rule.name.as_deref(), 200));
    if depth > 0 {
        rule.meta = Meta::default();
        rule.priority = None;
    } else if let Some(priority) = rule.priority {
        checks.in_range(&field("priority"), priority, 0..=1_000_000);
    }
    if rule.types.is_empty() {
        checks.push(&field("types"), "required", "types needs at least one of CHAT, CALL");
    }
    checks.unique_items(&field("types"), &rule.types, 2, |_, _, _| {});
    check_conditions(checks, &field("conditions"), &rule.conditions, refs);
    if rule.actions.is_empty() {
        checks.push(&field("actions"), "required", "a rule needs at least one action");
    }
    if rule.actions.len() > 20 {
        checks.push(&field("actions"), "too_many", "actions may hold at most 20 items");
    }
    for (i, a) in rule.actions.iter().enumerate() {
        let at = format!("{}[{i}]", field("actions"));
        match a {
            Action::Queue {
                target,
                max_wait_seconds,
                ..
            } => {
                checks.in_range(&format!("{at}.maxWaitSeconds"), *max_wait_seconds, 1..=5400);
                let value_at = format!("{at}.target.value");
                match target.kind {
                    QueueTargetType::User => refs.users.push((value_at, target.value.clone())),
                    QueueTargetType::Team => refs.teams.push((value_at, target.value.clone())),
                    QueueTargetType::Tag => {
                        if target.value.trim().is_empty() || target.value.chars().count() > 64 {
                            checks.push(&value_at, "invalid_value", "a tag is 1 to 64 characters");
                        }
                    }
                }
            }
            Action::RoutingTo { rule_id } => refs.rules.push((format!("{at}.ruleId"), rule_id.clone())),
            Action::SendFlow { flow_id } => refs.flows.push((format!("{at}.flowId"), flow_id.clone())),
            Action::SystemMessage { system_message_id } => refs
                .system_messages
                .push((format!("{at}.systemMessageId"), system_message_id.clone())),
        }
    }
    if rule.else_rules.len() > 10 {
        checks.push(&field("elseRules"), "too_many", "elseRules may hold at most 10 items");
    }
    if !rule.else_rules.is_empty() && depth + 1 >= MAX_ELSE_DEPTH {
        checks.push(
            &field("elseRules"),
            "too_deep",
            format!("else-rules nest at most {MAX_ELSE_DEPTH} levels"),
        );
        return;
    }
    for (i, nested) in rule.else_rules.iter_mut().enumerate() {
        check_rule(checks, &format!("{}[{i}]", field("elseRules")), nested, depth + 1, refs);
    }
}

/// Whether following `ROUTING_TO` edges from `start` comes back to it.
pub(super) fn closes_cycle(start: &str, edges: &HashMap<String, Vec<String>>) -> bool {
    let mut seen = HashSet::new();
    let mut stack: Vec<&str> = edges
        .get(start)
        .map(|v| v.iter().map(String::as_str).collect())
        .unwrap_or_default();
    while let Some(next) = stack.pop() {
        if next == start {
            return true;
        }
        if seen.insert(next) {
            if let Some(more) = edges.get(next) {
                stack.extend(more.iter().map(String::as_str));
            }
        }
    }
    false
}

impl Services {
    pub(super) async fn resolve_references(
        &self,
        tenant_id: &TenantId,
        checks: &mut Checks,
        refs: References,
    ) -> CoreResult<()> {
        for (at, id) in refs.opening_hours {
            if !self.config_exists::<OpeningHours>(tenant_id, &id).await? {
                checks.unknown_reference(&at, "opening hours", &id);
            }
        }
        for (at, id) in refs.system_messages {
            if !self.config_exists::<SystemMessage>(tenant_id, &id).await? {
                checks.unknown_reference(&at, "system message", &id);
            }
        }
        for (at, id) in refs.flows {
            if !self.config_exists::<Flow>(tenant_id, &id).await? {
                checks.unknown_reference(&at, "flow", &id);
            }
        }
        for (at, id) in refs.rules {
            if !self.config_exists::<RoutingRule>(tenant_id, &id).await? {
                checks.unknown_reference(&at, "routing rule", &id);
            }
        }
        let user_ids: Vec<String> = refs.users.iter().map(|(_, id)| id.clone()).collect();
        let known = self.existing_user_ids(tenant_id, &user_ids).await?;
        for (at, id) in refs.users {
            if !known.contains(&id) {
                checks.unknown_reference(&at, "user", &id);
            }
        }
        for (at, id) in refs.teams {
            let team = self.get_team(tenant_id, &crate::ids::TeamId::from(id.as_str())).await;
            checks.reference(&at, "team", &id, team)?;
        }
        Ok(())
    }
}
