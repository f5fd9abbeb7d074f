//! Typing indicators, both ways: the visitor sees "Ada is typing…", and the
//! agents see the visitor's draft as it is typed, unless the workspace keeps
//! drafts to the visitor (`typingPreview`). Nothing here is stored: each
//! signal is a live update ([`LiveEvent::Typing`]) that screens forget after a
//! few seconds without another. Senders repeat it while typing goes on (the
//! visitor script every 1.5 s at most), and say when it stops.

use serde::{Deserialize, Serialize};

use crate::{
    db::TenantTable,
    error::CoreResult,
    ids::{CustomerId, TenantId, UserId},
    live::{LiveEvent, LiveUpdate},
    validate::Checks,
    Services,
};

/// The longest draft a typing signal carries, in characters: the visitor
/// script sends the end of a longer one. It keeps each announcement well under
/// PostgreSQL's 8,000-byte `NOTIFY` payload.
pub const MAX_DRAFT: usize = 500;
/// The longest name an integration's typing signal carries.
pub const MAX_TYPIST_NAME: usize = 100;

/// The visitor is typing, or stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"typing": true, "draft": "Where is my ord"}))]
pub struct VisitorTypingIn {
    /// Required: true while the visitor types, false once they stop (or send).
    #[schema(required = true, nullable = false)]
    pub typing: Option<bool>,
    /// What the visitor has typed so far (its end, at most 500 characters);
    /// agents see it only where the workspace's `typingPreview` is on.
    #[schema(max_length = 500)]
    pub draft: Option<String>,
}

/// An agent or integration is typing a reply, or stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"typing": true, "name": "Order bot"}))]
pub struct AgentTypingIn {
    /// Required: true while typing, false once stopped (or sent).
    #[schema(required = true, nullable = false)]
    pub typing: Option<bool>,
    /// The name the visitor sees ("Order bot is typing…"); without one, the
    /// visitor sees that someone is typing.
    #[schema(max_length = 100)]
    pub name: Option<String>,
}

/// Whether a signal says typing, and a field error when it does not say.
fn typing_of(checks: &mut Checks, typing: Option<bool>) -> bool {
    if typing.is_none() {
        checks.push("typing", "required", "typing is required");
    }
    typing.unwrap_or(false)
}

impl Services {
    /// The visitor of `customer_id` types (or stopped): the agents hear it,
    /// with the draft when the workspace shows drafts.
    pub async fn visitor_typing(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: &VisitorTypingIn,
    ) -> CoreResult<()> {
        let mut checks = Checks::new();
        let active = typing_of(&mut checks, input.typing);
        let draft = input.draft.as_deref().filter(|d| !d.trim().is_empty());
        if draft.is_some_and(|d| d.chars().count() > MAX_DRAFT) {
            checks.push(
                "draft",
                "too_long",
                format!("draft must be at most {MAX_DRAFT} characters"),
            );
        }
        checks.finish()?;
        let preview = self.get_tenant(tenant_id).await?.typing_preview;
        let draft = draft.filter(|_| preview && active).map(str::to_string);
        self.signal_live(LiveUpdate {
            tenant_id: tenant_id.clone(),
            customer_id: customer_id.clone(),
            event: LiveEvent::Typing {
                by_visitor: true,
                user_id: None,
                name: None,
                draft,
                active,
            },
        })
        .await
    }

    /// An agent (`user_id`, shown as `name`) or an integration types a reply to
    /// `customer_id`, or stopped: the visitor and the other agents hear it.
    pub async fn agent_typing(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        user_id: Option<&str>,
        input: &AgentTypingIn,
    ) -> CoreResult<()> {
        let mut checks = Checks::new();
        let active = typing_of(&mut checks, input.typing);
        let name = checks.optional_text("name", input.name.as_deref(), MAX_TYPIST_NAME);
        checks.finish()?;
        let _: (String,) = TenantTable::new("customers", "customer")
            .read(self.db(), tenant_id, customer_id, "id")
            .await?;
        self.signal_live(LiveUpdate {
            tenant_id: tenant_id.clone(),
            customer_id: customer_id.clone(),
            event: LiveEvent::Typing {
                by_visitor: false,
                user_id: user_id.map(UserId::from),
                name,
                draft: None,
                active,
            },
        })
        .await
    }
}
