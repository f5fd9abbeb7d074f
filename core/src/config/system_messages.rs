//! System messages (spec 2.5): reusable texts in a language, sent by routing rules
//! (e.g. "all agents are busy"). `language` is a BCP 47 tag such as `en` or `de-CH`.

use serde::{Deserialize, Serialize};

use super::{ConfigKind, Meta};
use crate::{audit::Actor, error::CoreResult, ids::TenantId, validate::Checks, Services};

/// A system message.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "busy", "message": "All agents are busy; we will be with you shortly.", "language": "en"}))]
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
        pattern = r"^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$",
        example = "de-CH"
    )]
    pub language: Option<String>,
    /// Name shared by the translations of one message (at most 200 characters), e.g.
    /// `busy`. A routing rule's `SYSTEM_MESSAGE` names one of them; the customer gets
    /// the one in their language, else the one in the tenant's language, else the
    /// one named. Without a name a message has no translations. Our extension.
    #[schema(max_length = 200, example = "busy")]
    pub name: Option<String>,
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
            "{} {} {}",
            self.name.clone().unwrap_or_default(),
            self.language.clone().unwrap_or_default(),
            self.message.clone().unwrap_or_default()
        )
    }
}

impl Services {
    /// Creates or overrides a system message.
    pub async fn save_system_message(
        &self,
        tenant_id: &TenantId,
        mut input: SystemMessage,
        actor: &Actor,
    ) -> CoreResult<SystemMessage> {
        let mut checks = Checks::new();
        input.message = Some(checks.required_text("message", input.message.as_deref(), 4000));
        let language = checks.required_text("language", input.language.as_deref(), 35);
        if !language.is_empty() {
            if let Some(tag) = checks.language("language", &language) {
                input.language = Some(tag);
            }
        }
        input.name = checks.optional_text("name", input.name.as_deref(), 200);
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }
}

/// The translation of `named` to send to a customer who speaks `customer_language`
/// in a tenant whose language is `tenant_language`: among the messages sharing
/// `named`'s name, the customer's language (the exact tag, else the same primary
/// language: `de` for `de-CH`), else the tenant's, else `named` itself.
pub fn translation<'m>(
    named: &'m SystemMessage,
    all: &'m [SystemMessage],
    customer_language: Option<&str>,
    tenant_language: &str,
) -> &'m SystemMessage {
    let Some(name) = named.name.as_deref().filter(|n| !n.is_empty()) else {
        return named;
    };
    let siblings: Vec<&SystemMessage> = all.iter().filter(|m| m.name.as_deref() == Some(name)).collect();
    let primary = |tag: &str| tag.split('-').next().unwrap_or(tag).to_ascii_lowercase();
    let find = |wanted: &str| {
        let exact = siblings
            .iter()
            .find(|m| m.language.as_deref().is_some_and(|l| l.eq_ignore_ascii_case(wanted)));
        exact
            .or_else(|| {
                siblings
                    .iter()
                    .find(|m| m.language.as_deref().is_some_and(|l| primary(l) == primary(wanted)))
            })
            .copied()
    };
    customer_language
        .and_then(find)
        .or_else(|| find(tenant_language))
        .unwrap_or(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(id: &str, name: Option<&str>, language: &str) -> SystemMessage {
        SystemMessage {
            meta: Meta {
                id: Some(id.into()),
                ..Meta::default()
            },
            message: Some(format!("text {id}")),
            language: Some(language.into()),
            name: name.map(String::from),
        }
    }

    #[test]
    fn the_customers_language_then_the_tenants_then_the_named_one() {
        let all = vec![
            message("en", Some("busy"), "en"),
            message("de", Some("busy"), "de"),
            message("fr-CA", Some("busy"), "fr-CA"),
            message("other", Some("closed"), "uk"),
            message("lonely", None, "ru"),
        ];
        let id = |m: &SystemMessage| m.meta.id.clone().unwrap();
        let table = [
            ("en", Some("de"), "en", "de"),
            ("en", Some("de-CH"), "en", "de"),
            ("de", Some("fr"), "en", "fr-CA"),
            ("de", Some("uk"), "en", "en"),
            ("de", None, "en", "en"),
            ("de", Some("uk"), "jp", "de"),
            ("lonely", Some("de"), "de", "lonely"),
        ];
        for (named, customer, tenant, expected) in table {
            let named = all.iter().find(|m| id(m) == named).unwrap();
            assert_eq!(
                id(translation(named, &all, customer, tenant)),
                expected,
                "{customer:?} {tenant}"
            );
        }
    }
}
