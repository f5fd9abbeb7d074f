//! Watchdogs (spec 2.8): tenant-level alerts of a kind, sent to receivers.
//!
//! `WatchdogReceiver` (not shown in the spec) is `{type, value}`: `EMAIL` with an
//! e-mail address, `USER` with the id of a user of the tenant, or `WEBHOOK` with an
//! absolute http(s) URL. SLA rules use the same receivers.

use serde::{Deserialize, Serialize};

use super::{ConfigKind, Meta};
use crate::{
    audit::Actor,
    error::CoreResult,
    ids::TenantId,
    validate::{is_email, Checks},
    Services,
};

/// Kinds of watchdog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WatchdogType {
    /// A script error on the tenant's site.
    JavascriptError,
    /// A customer message arrived.
    MessageReceived,
    /// A customer was assigned.
    CustomerAssigned,
    /// A form was submitted.
    FormSubmission,
    /// A setting changed.
    SettingChanged,
}

/// Where an alert goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct WatchdogReceiver {
    /// `EMAIL`, `USER` or `WEBHOOK`.
    #[serde(rename = "type")]
    pub kind: ReceiverType,
    /// An e-mail address, a user id, or an http(s) URL.
    pub value: String,
}

impl WatchdogReceiver {
    /// What `value` must be for each `type`, as JSON Schema conditions (a `USER`'s id
    /// must also name a user of the tenant, which no schema can say).
    pub fn schema_conditions() -> serde_json::Value {
        let when = |kind: &str, value: serde_json::Value| serde_json::json!({"if": {"properties": {"type": {"const": kind}}}, "then": {"properties": {"value": value}}});
        serde_json::json!([
            when("EMAIL", serde_json::json!({"format": "email"})),
            when(
                "WEBHOOK",
                serde_json::json!({"format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"})
            ),
        ])
    }
}

/// Kinds of receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReceiverType {
    /// An e-mail address.
    Email,
    /// A user of the tenant, by id.
    User,
    /// An http(s) URL that receives a POST.
    Webhook,
}

/// A watchdog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"name": "Script errors", "watchdogType": "JAVASCRIPT_ERROR", "receivers": [{"type": "EMAIL", "value": "ops@example.com"}, {"type": "WEBHOOK", "value": "https://hooks.example.com/rapport"}]}))]
pub struct Watchdog {
    /// Id and timestamps.
    #[serde(flatten)]
    pub meta: Meta,
    /// Name (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// What it watches (required).
    #[schema(required = true, nullable = false)]
    pub watchdog_type: Option<WatchdogType>,
    /// Where alerts go (unique, at most 50).
    #[serde(default)]
    #[schema(max_items = 50)]
    pub receivers: Vec<WatchdogReceiver>,
}

impl ConfigKind for Watchdog {
    const KIND: &'static str = "watchdog";
    const LABEL: &'static str = "watchdog";
    fn meta(&self) -> &Meta {
        &self.meta
    }
    fn meta_mut(&mut self) -> &mut Meta {
        &mut self.meta
    }
    fn display_name(&self) -> String {
        self.name.clone().unwrap_or_default()
    }
}

impl Services {
    /// Checks receivers: each valid for its type, users existing in the tenant, no repeats.
    pub(crate) async fn check_receivers(
        &self,
        tenant_id: &TenantId,
        checks: &mut Checks,
        field: &str,
        receivers: &[WatchdogReceiver],
    ) -> CoreResult<()> {
        let mut users = Vec::new();
        checks.unique_items(field, receivers, 50, |checks, at, r| match r.kind {
            ReceiverType::Email if !is_email(&r.value) => checks.push(
                &format!("{at}.value"),
                "invalid_email",
                "an EMAIL receiver needs an e-mail address",
            ),
            ReceiverType::Webhook => checks.http_url(&format!("{at}.value"), &r.value),
            ReceiverType::User => users.push((format!("{at}.value"), r.value.clone())),
            ReceiverType::Email => {}
        });
        let ids: Vec<String> = users.iter().map(|(_, id)| id.clone()).collect();
        let known = self.existing_user_ids(tenant_id, &ids).await?;
        for (at, id) in users {
            if !known.contains(&id) {
                checks.unknown_reference(&at, "user", &id);
            }
        }
        Ok(())
    }

    /// Creates or overrides a watchdog.
    pub async fn save_watchdog(
        &self,
        tenant_id: &TenantId,
        mut input: Watchdog,
        actor: &Actor,
    ) -> CoreResult<Watchdog> {
        let mut checks = Checks::new();
        input.name = Some(checks.required_text("name", input.name.as_deref(), 200));
        if input.watchdog_type.is_none() {
            checks.push("watchdogType", "required", "watchdogType is required");
        }
        self.check_receivers(tenant_id, &mut checks, "receivers", &input.receivers)
            .await?;
        checks.finish()?;
        self.config_write(tenant_id, input, actor).await
    }

    /// Deletes a watchdog.
    pub async fn delete_watchdog(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        self.config_delete::<Watchdog>(tenant_id, id, actor).await
    }
}
