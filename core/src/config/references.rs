//! Who uses a configuration object, and deleting what nothing uses. Rules name
//! flows, system messages, opening hours and other routing rules; this is the
//! one place that knows which kind names which, so that deleting one of them
//! can say what still uses it (409 `in_use`), and the kinds that are named need
//! not know the kinds that name them.

use super::{
    flows::Flow,
    in_use,
    opening_hours::OpeningHours,
    rules::{action::ActionRule, RoutingRule, SlaRule},
    system_messages::SystemMessage,
};
use crate::{audit::Actor, error::CoreResult, ids::TenantId, Services};

/// A configuration object that rules may name.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Named<'a> {
    /// A flow, which routing rules send and action rules open the chat with.
    Flow(&'a str),
    /// A system message, which routing rules send.
    SystemMessage(&'a str),
    /// Opening hours, which routing, SLA and action rules test.
    OpeningHours(&'a str),
    /// A routing rule, which other routing rules route to.
    RoutingRule(&'a str),
}

impl Services {
    /// The rules of the tenant that name `named`, as a person would call them
    /// (`routing rule "VIP first"`); empty when nothing does.
    pub(crate) async fn rules_naming(&self, tenant_id: &TenantId, named: Named<'_>) -> CoreResult<Vec<String>> {
        let routing = self.config_all::<RoutingRule>(tenant_id).await?;
        let mut users: Vec<String> = routing
            .iter()
            .filter(|r| match named {
                Named::Flow(id) => r.flow_ids().iter().any(|f| f == id),
                Named::SystemMessage(id) => r.system_message_ids().iter().any(|m| m == id),
                Named::OpeningHours(id) => r.opening_hours_ids().iter().any(|h| h == id),
                Named::RoutingRule(id) => {
                    r.meta.id.as_deref() != Some(id) && r.routed_rule_ids().iter().any(|o| o == id)
                }
            })
            .map(|r| format!("routing rule \"{}\"", r.name.clone().unwrap_or_default()))
            .collect();
        if let Named::OpeningHours(id) = named {
            for rule in self.config_all::<SlaRule>(tenant_id).await? {
                if rule.opening_hours_ids().iter().any(|h| h == id) {
                    users.push(format!("SLA rule \"{}\"", rule.name.clone().unwrap_or_default()));
                }
            }
        }
        if let Named::OpeningHours(_) | Named::Flow(_) = named {
            for rule in self.config_all::<ActionRule>(tenant_id).await? {
                let names = match named {
                    Named::Flow(id) => rule.flow_id() == Some(id),
                    Named::OpeningHours(id) => rule.opening_hours_ids().iter().any(|h| h == id),
                    _ => false,
                };
                if names {
                    users.push(format!("action rule \"{}\"", rule.name.clone().unwrap_or_default()));
                }
            }
        }
        Ok(users)
    }

    /// Deletes a flow that no routing rule sends.
    pub async fn delete_flow(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        let users = self.rules_naming(tenant_id, Named::Flow(id)).await?;
        if !users.is_empty() {
            return Err(in_use("flow", &users));
        }
        self.config_delete::<Flow>(tenant_id, id, actor).await
    }

    /// Deletes a system message that no routing rule uses.
    pub async fn delete_system_message(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        let users = self.rules_naming(tenant_id, Named::SystemMessage(id)).await?;
        if !users.is_empty() {
            return Err(in_use("system message", &users));
        }
        self.config_delete::<SystemMessage>(tenant_id, id, actor).await
    }

    /// Deletes opening hours that no rule uses and that are not the tenant's
    /// business hours.
    pub async fn delete_opening_hours(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        let mut users = Vec::new();
        if self.get_tenant(tenant_id).await?.business_hours_id.as_deref() == Some(id) {
            users.push("the workspace's business hours (Settings → Workspace)".to_string());
        }
        users.extend(self.rules_naming(tenant_id, Named::OpeningHours(id)).await?);
        if !users.is_empty() {
            return Err(in_use("opening hours", &users));
        }
        self.config_delete::<OpeningHours>(tenant_id, id, actor).await
    }

    /// Deletes a routing rule that no other rule routes to.
    pub async fn delete_routing_rule(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        let users = self.rules_naming(tenant_id, Named::RoutingRule(id)).await?;
        if !users.is_empty() {
            return Err(in_use("routing rule", &users));
        }
        self.config_delete::<RoutingRule>(tenant_id, id, actor).await
    }
}
