//! System messages (spec 2.5): reusable texts in a language, sent by routing rules
//! (e.g. "all agents are busy"). `language` is a BCP 47 tag such as `en` or `de-CH`.

use serde::{Deserialize, Serialize};

use super::{in_use, rules::RoutingRule, ConfigKind, Meta};
use crate::{audit::Actor, error::CoreResult, validate::Checks, Services};

/// A system message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"message": "All agents are busy; we will be with you shortly.", "language": "en"}))]
pub struct SystemMessage {
    /// Id and timestamps.
    #[serde(flatten)]
    pub meta: Meta,
    /// The text (required, at most 4000 characters).
    #[schema(
        required = true,
        nullable = false,
        min_length = 1,
        max_length = 4000,
        pattern = r"\S"
    )]
    pub message: Option<String>,
    /// BCP 47 language tag (required), e.g. `en`, `de-CH`.
    #[schema(
        required = true,
        nullable = false,
        min_length = 2,
        max_length = 35,
        example = "de-CH"
    )]
    pub language: Option<String>,
}

impl ConfigKind for SystemMessage {
    const KIND: &'static str = "systemmessage";
    const LABEL: &'static str = "system message";
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn display_name(&self) -> String {
        format!(
            "{} {}",
            self.language.clone().unwrap_or_default(),
            self.message.clone().unwrap_or_default()
        )
    }
}

impl Services {
    /// Creates or overrides a system message.
    pub async fn save_system_message(
        &self,
        tenant_id: &str,
        mut input: SystemMessage,
        actor: &Actor,
    ) -> CoreResult<SystemMessage> {
        let mut checks = Checks::new();
        input.message = Some(checks.required_text("message", input.message.as_deref(), 4000));
        let language = checks.required_text("language", input.language.as_deref(), 35);
        if !language.is_empty() {
            match language_tags::LanguageTag::parse(&language) {
                Ok(tag) if tag.is_valid() => input.language = Some(tag.to_string()),
                _ => checks.push(
                    "language",
                    "invalid_language",
                    "language must be a BCP 47 tag such as en or de-CH",
                ),
            }
        }
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }

    /// Deletes a system message that no routing rule uses.
    pub async fn delete_system_message(&self, tenant_id: &str, id: &str, actor: &Actor) -> CoreResult<()> {
        let users: Vec<String> = self
            .config_all::<RoutingRule>(tenant_id)
            .await?
            .into_iter()
            .filter(|r| r.system_message_ids().contains(&id.to_string()))
            .map(|r| format!("routing rule \"{}\"", r.name.unwrap_or_default()))
            .collect();
        if !users.is_empty() {
            return Err(in_use("system message", &users));
        }
        self.config_delete::<SystemMessage>(tenant_id, id, actor).await
    }
}
