//! The order routing rules are tried in, edited as a whole: the dashboard's
//! "Move up" / "Move down" and `PUT /rest/v1/rule/routing/order`.
//!
//! A reorder rewrites every rule's `priority` to 10, 20, 30… in the order given,
//! in one transaction, so that no reader sees half an order; the gaps leave room
//! to slot a rule in between by hand over the API.

use std::collections::HashSet;

use super::RoutingRule;
use crate::{
    audit::{self, Actor},
    config::ConfigKind,
    error::{CoreError, CoreResult},
    ids::TenantId,
    time::now_ms,
    with_tx, Services,
};

/// The gap between the priorities a reorder writes.
pub const PRIORITY_STEP: i64 = 10;

/// The priorities rules get in the order of `ids`: 10, 20, 30…
fn priority_at(index: usize) -> i64 {
    (index as i64 + 1) * PRIORITY_STEP
}

/// Sorts rules the way the engine tries them: by priority, then name (the
/// stable sort keeps `config_all`'s name order); rules stored before priorities
/// existed go last.
pub fn sort_by_priority(rules: &mut [RoutingRule]) {
    rules.sort_by_key(|r| r.priority.unwrap_or(i64::MAX));
}

/// Refuses an order that does not name every rule of `known` exactly once:
/// unknown ids are a 404 (another tenant's ids look unknown), the rest 422 on
/// `ids`.
fn check_order(known: &HashSet<&str>, ids: &[String]) -> CoreResult<()> {
    if ids.iter().any(|id| !known.contains(id.as_str())) {
        return Err(CoreError::NotFound(RoutingRule::LABEL));
    }
    if ids.is_empty() {
        return Err(CoreError::invalid(
            "ids",
            "required",
            "ids must list the tenant's routing rules in the new order",
        ));
    }
    let mut seen = HashSet::new();
    if let Some(twice) = ids.iter().find(|id| !seen.insert(id.as_str())) {
        return Err(CoreError::invalid(
            "ids",
            "duplicate",
            format!("ids names routing rule {twice} more than once"),
        ));
    }
    let missing: Vec<&str> = known.iter().copied().filter(|id| !seen.contains(id)).collect();
    if !missing.is_empty() {
        let mut missing = missing;
        missing.sort_unstable();
        return Err(CoreError::invalid(
            "ids",
            "incomplete",
            format!(
                "ids must list every routing rule of the tenant; missing: {}",
                missing.join(", ")
            ),
        ));
    }
    Ok(())
}

impl Services {
    /// Every routing rule of the tenant, applied or not, in the order they are
    /// tried (see [`sort_by_priority`]).
    pub(crate) async fn routing_rules_by_priority(&self, tenant_id: &TenantId) -> CoreResult<Vec<RoutingRule>> {
        let mut rules = self.config_all::<RoutingRule>(tenant_id).await?;
        sort_by_priority(&mut rules);
        Ok(rules)
    }

    /// Puts the tenant's routing rules in the order of `ordered_ids`, which must
    /// name each of them once: priorities become 10, 20, 30… in one transaction,
    /// audited as `routingrule.reorder`. Returns the rules in their new order.
    pub async fn reorder_routing_rules(
        &self,
        tenant_id: &TenantId,
        ordered_ids: &[String],
        actor: &Actor,
    ) -> CoreResult<Vec<RoutingRule>> {
        let mut tx = self.db().begin().await?;
        // Read in the transaction: a rule created meanwhile must be named too.
        let rows: Vec<(String, String)> = with_tx!(&mut tx, |conn| sqlx::query_as(
            "select id, body from config_objects where tenant_id = $1 and kind = $2"
        )
        .bind(tenant_id)
        .bind(RoutingRule::KIND)
        .fetch_all(conn)
        .await)?;
        let known: HashSet<&str> = rows.iter().map(|(id, _)| id.as_str()).collect();
        check_order(&known, ordered_ids)?;
        let now = now_ms();
        for (index, id) in ordered_ids.iter().enumerate() {
            let body = rows
                .iter()
                .find(|(rid, _)| rid == id)
                .map(|(_, body)| body.as_str())
                .unwrap_or_default();
            let mut rule: RoutingRule = serde_json::from_str(body)
                .map_err(|e| CoreError::Internal(format!("stored routing rule {id} is unreadable: {e}")))?;
            let priority = priority_at(index);
            if rule.priority == Some(priority) {
                continue;
            }
            rule.priority = Some(priority);
            let body = serde_json::to_string(&rule).map_err(|e| CoreError::Internal(e.to_string()))?;
            with_tx!(&mut tx, |conn| sqlx::query(
                "update config_objects set body = $4, updated_at = $5 where tenant_id = $1 and kind = $2 and id = $3"
            )
            .bind(tenant_id)
            .bind(RoutingRule::KIND)
            .bind(id)
            .bind(&body)
            .bind(now)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        }
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "routingrule.reorder",
            RoutingRule::KIND,
            None,
        )
        .await?;
        tx.commit().await?;
        self.routing_rules_by_priority(tenant_id).await
    }

    /// Moves routing rule `id` one place earlier (`up`) or later in the order;
    /// at either end it stays. Returns the rules in their new order.
    pub async fn move_routing_rule(
        &self,
        tenant_id: &TenantId,
        id: &str,
        up: bool,
        actor: &Actor,
    ) -> CoreResult<Vec<RoutingRule>> {
        let rules = self.routing_rules_by_priority(tenant_id).await?;
        let mut ids: Vec<String> = rules.iter().filter_map(|r| r.meta.id.clone()).collect();
        let at = ids
            .iter()
            .position(|r| r == id)
            .ok_or(CoreError::NotFound(RoutingRule::LABEL))?;
        let other = if up { at.checked_sub(1) } else { Some(at + 1) };
        match other.filter(|o| *o < ids.len()) {
            Some(other) => ids.swap(at, other),
            None => return Ok(rules),
        }
        self.reorder_routing_rules(tenant_id, &ids, actor).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn an_order_names_every_rule_once() {
        let known: HashSet<&str> = ["a", "b", "c"].into_iter().collect();
        assert!(check_order(&known, &ids(&["c", "a", "b"])).is_ok());
        assert!(matches!(
            check_order(&known, &ids(&["a", "b", "x"])),
            Err(CoreError::NotFound(_))
        ));
        for (wrong, code) in [
            (ids(&[]), "required"),
            (ids(&["a", "a", "b", "c"]), "duplicate"),
            (ids(&["a", "c"]), "incomplete"),
        ] {
            match check_order(&known, &wrong) {
                Err(CoreError::Validation(errors)) => {
                    assert_eq!(errors[0].field, "ids");
                    assert_eq!(errors[0].code, code, "{wrong:?}");
                }
                other => panic!("{wrong:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn priorities_are_spaced_and_unprioritised_rules_go_last() {
        assert_eq!([0, 1, 2].map(priority_at), [10, 20, 30]);
        let rule = |name: &str, priority: Option<i64>| RoutingRule {
            name: Some(name.into()),
            priority,
            ..Default::default()
        };
        let mut rules = vec![
            rule("a", None),
            rule("b", Some(20)),
            rule("c", Some(10)),
            rule("d", Some(10)),
        ];
        sort_by_priority(&mut rules);
        let names: Vec<_> = rules.iter().map(|r| r.name.clone().unwrap()).collect();
        assert_eq!(names, ["c", "d", "b", "a"]);
    }
}
