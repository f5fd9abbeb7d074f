//! Checking an appointment's input: every field the spec names, in range, with
//! its owner and customer resolved in the tenant and its password hashed.

use std::collections::BTreeMap;

use super::{AppointmentIn, AppointmentPermissions, ValidType};
use crate::{
    crypto::hash_password,
    error::CoreResult,
    ids::{CustomerId, TenantId, UserId},
    validate::{is_email, Checks},
    Services,
};

/// An appointment's input once checked: every field resolved and in range.
pub(super) struct ValidAppointment {
    pub(super) title: String,
    pub(super) description: Option<String>,
    pub(super) duration: i32,
    pub(super) starts_at: i64,
    pub(super) timezone_id: String,
    pub(super) record: bool,
    pub(super) owner: Option<UserId>,
    pub(super) password_hash: Option<String>,
    pub(super) attendees: Vec<String>,
    pub(super) send_invite_email: bool,
    pub(super) customer_id: Option<CustomerId>,
    pub(super) valid: bool,
    pub(super) valid_type: ValidType,
    pub(super) valid_after: Option<i32>,
    pub(super) valid_before: Option<i32>,
    pub(super) custom_properties: BTreeMap<String, serde_json::Value>,
    pub(super) permissions: AppointmentPermissions,
}

impl Services {
    /// Checks an appointment's input in the tenant, resolving its owner and
    /// customer and hashing its password.
    pub(super) async fn validate_appointment(
        &self,
        tenant_id: &TenantId,
        input: AppointmentIn,
    ) -> CoreResult<ValidAppointment> {
        let tenant = self.get_tenant(tenant_id).await?;
        let mut checks = Checks::new();
        let title = checks.required_text("title", input.title.as_deref(), 200);
        let description = checks.optional_text("description", input.description.as_deref(), 4000);
        let duration = input.duration_in_minutes.unwrap_or(30);
        checks.in_range("durationInMinutes", duration.into(), 1..=1440);
        if input.date.is_none() {
            checks.push("date", "required", "date is required");
        }
        let timezone_id = input.timezone_id.clone().unwrap_or(tenant.timezone);
        checks.timezone("timezoneId", &timezone_id);
        if let Some(p) = input.password.as_deref() {
            let n = p.chars().count();
            if !(4..=128).contains(&n) {
                checks.push("password", "out_of_range", "password must be 4 to 128 characters");
            }
        }
        let attendees: Vec<String> = input
            .attendees
            .unwrap_or_default()
            .iter()
            .map(|a| a.trim().to_lowercase())
            .collect();
        checks.unique_items("attendees", &attendees, 100, |checks, at, a| {
            if !is_email(a) {
                checks.push(at, "invalid_email", format!("{at} must be an e-mail address"));
            }
        });
        let valid_type = input.valid_type.unwrap_or_default();
        for (field, value) in [("validAfter", input.valid_after), ("validBefore", input.valid_before)] {
            if let Some(v) = value {
                if valid_type == ValidType::Appointment {
                    checks.push(
                        field,
                        "not_applicable",
                        format!("{field} applies only with validType HOURS"),
                    );
                } else {
                    checks.in_range(field, v.into(), 0..=8760);
                }
            }
        }
        let custom_properties = input.custom_properties.unwrap_or_default();
        if custom_properties.len() > 50 {
            checks.push(
                "customProperties",
                "too_many",
                "customProperties may hold at most 50 keys",
            );
        }
        for key in custom_properties.keys() {
            if key.is_empty() || key.chars().count() > 100 {
                checks.push(
                    &format!("customProperties.{key}"),
                    "invalid_key",
                    "keys are 1 to 100 characters",
                );
            }
        }
        if serde_json::to_string(&custom_properties).map(|s| s.len()).unwrap_or(0) > 16_384 {
            checks.push(
                "customProperties",
                "too_large",
                "customProperties may take at most 16 KiB",
            );
        }
        let owner = match input.owner.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
            Some(o) => checks
                .reference("owner", "user", o, self.find_user(tenant_id, o).await)?
                .map(|u| u.id),
            None => None,
        };
        let customer_id = match input.customer_id.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
            Some(c) => checks
                .reference(
                    "customerId",
                    "customer",
                    c,
                    self.get_customer(tenant_id, &CustomerId::from(c)).await,
                )?
                .map(|found| found.id),
            None => None,
        };
        checks.finish()?;
        let password_hash = match input.password.as_deref() {
            Some(p) => Some(hash_password(p).await?),
            None => None,
        };
        Ok(ValidAppointment {
            title,
            description,
            duration,
            starts_at: input.date.map(|d| d.timestamp_millis()).unwrap_or_default(),
            timezone_id,
            record: input.record.unwrap_or(false),
            owner,
            password_hash,
            attendees,
            send_invite_email: input.send_invite_email.unwrap_or(false),
            customer_id,
            valid: input.valid.unwrap_or(true),
            valid_type,
            valid_after: (valid_type == ValidType::Hours).then(|| input.valid_after.unwrap_or(0)),
            valid_before: (valid_type == ValidType::Hours).then(|| input.valid_before.unwrap_or(0)),
            custom_properties,
            permissions: input.permissions.unwrap_or_default(),
        })
    }
}
