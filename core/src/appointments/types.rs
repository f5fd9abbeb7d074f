//! What an appointment is on the wire: the appointment, its input, who may do
//! what in its call, and the list's filter.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::ids::{AppointmentId, CustomerId};

/// How long the join link is valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ValidType {
    /// From `validBefore` hours before the start to `validAfter` hours after the end.
    Hours,
    /// During the appointment.
    #[default]
    Appointment,
}

impl ValidType {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            ValidType::Hours => "HOURS",
            ValidType::Appointment => "APPOINTMENT",
        }
    }
}

/// Permissions in the conference (`AppointmentAPIPermissions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppointmentPermissions {
    /// Guests wait until a host lets them in (default false): any signed-in
    /// agent of the workspace in the call, the owner or not.
    #[serde(default)]
    pub enable_waiting_room: bool,
    /// Guests may share their screen (default true).
    #[serde(default = "yes")]
    pub allow_screen_share: bool,
    /// Guests may use the conference chat (default true).
    #[serde(default = "yes")]
    pub allow_chat: bool,
}

fn yes() -> bool {
    true
}

impl Default for AppointmentPermissions {
    fn default() -> Self {
        Self {
            enable_waiting_room: false,
            allow_screen_share: true,
            allow_chat: true,
        }
    }
}

/// Input to create or replace an appointment (spec 2.11).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"title": "Contract review", "date": "2026-12-01T14:00:00Z", "durationInMinutes": 45, "timezoneId": "Europe/Berlin", "owner": "agent@example.com", "attendees": ["client@example.org"], "validType": "HOURS", "validBefore": 1, "validAfter": 2, "permissions": {"enableWaitingRoom": true}}))]
pub struct AppointmentIn {
    /// Title (required, at most 200 characters).
    #[schema(required = true, nullable = false, min_length = 1, max_length = 200, pattern = r"\S")]
    pub title: Option<String>,
    /// Description, also used in invitations (at most 4000 characters).
    #[schema(max_length = 4000)]
    pub description: Option<String>,
    /// Length in minutes (1–1440, default 30).
    #[schema(minimum = 1, maximum = 1440)]
    pub duration_in_minutes: Option<i32>,
    /// Start (required).
    #[schema(required = true, nullable = false)]
    pub date: Option<DateTime<Utc>>,
    /// IANA time zone of the appointment; default the tenant's.
    #[schema(example = "Europe/Berlin")]
    pub timezone_id: Option<String>,
    /// Record the conference automatically (default false).
    pub record: Option<bool>,
    /// Owner: id or e-mail of a user of the tenant, named as the organiser in
    /// invitations. Every signed-in agent of the workspace hosts the call.
    pub owner: Option<String>,
    /// Conference password (4–128 characters); write-only.
    #[schema(min_length = 4, max_length = 128)]
    pub password: Option<String>,
    /// Attendee e-mails, unique (at most 100).
    #[schema(max_items = 100)]
    pub attendees: Option<Vec<String>>,
    /// Send invitations to all attendees: on this create or update, one mail per
    /// attendee goes to the mail outbox (sent by SMTP when configured). They
    /// count against the workspace's mails per day (`mailsPerDay` of `GET
    /// /tenant/{id}/limits`): past it, the create or update is refused with 429
    /// `mail_allowance_spent` and changes nothing.
    pub send_invite_email: Option<bool>,
    /// Id of a customer of the tenant.
    #[schema(value_type = Option<String>)]
    pub customer_id: Option<CustomerId>,
    /// Whether the join link works at all (default true).
    pub valid: Option<bool>,
    /// Hours after the end the link still works (`HOURS` only, 0–8760).
    #[schema(minimum = 0, maximum = 8760)]
    pub valid_after: Option<i32>,
    /// Hours before the start the link already works (`HOURS` only, 0–8760).
    #[schema(minimum = 0, maximum = 8760)]
    pub valid_before: Option<i32>,
    /// `HOURS` or `APPOINTMENT` (default).
    pub valid_type: Option<ValidType>,
    /// Free properties (at most 50 keys of 1–100 characters, 16 KiB as JSON).
    pub custom_properties: Option<BTreeMap<String, serde_json::Value>>,
    /// Conference permissions.
    pub permissions: Option<AppointmentPermissions>,
}

impl AppointmentIn {
    /// `validAfter` and `validBefore` apply only with `validType: HOURS`, and
    /// attendees are e-mail addresses, as JSON Schema conditions.
    pub fn schema_conditions() -> serde_json::Value {
        let given = |field: &str| serde_json::json!({"required": [field], "properties": {field: {"type": "integer"}}});
        serde_json::json!([
            {
                "if": {"anyOf": [given("validAfter"), given("validBefore")]},
                "then": {"required": ["validType"], "properties": {"validType": {"const": "HOURS"}}},
            },
            {"properties": {"attendees": {"items": {"format": "email"}}}},
        ])
    }
}

/// Body of the partial update: only the recording switch.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AppointmentRecordPatch {
    /// Record the conference automatically.
    pub record: bool,
}

/// An appointment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Appointment {
    /// Appointment id.
    #[schema(value_type = String)]
    pub id: AppointmentId,
    /// Title.
    pub title: String,
    /// Description.
    pub description: Option<String>,
    /// Length in minutes.
    pub duration_in_minutes: i32,
    /// Start.
    pub date: DateTime<Utc>,
    /// IANA time zone.
    pub timezone_id: String,
    /// Automatic recording.
    pub record: bool,
    /// Owner's user id.
    pub owner: Option<String>,
    /// Whether a password is set (it is never returned).
    pub has_password: bool,
    /// Attendee e-mails.
    pub attendees: Vec<String>,
    /// Whether invitations are sent.
    pub send_invite_email: bool,
    /// Customer id.
    #[schema(value_type = Option<String>)]
    pub customer_id: Option<CustomerId>,
    /// Whether the join link works at all.
    pub valid: bool,
    /// Hours after the end (`HOURS`).
    pub valid_after: Option<i32>,
    /// Hours before the start (`HOURS`).
    pub valid_before: Option<i32>,
    /// `HOURS` or `APPOINTMENT`.
    pub valid_type: ValidType,
    /// Free properties.
    pub custom_properties: BTreeMap<String, serde_json::Value>,
    /// Conference permissions.
    pub permissions: AppointmentPermissions,
    /// The link attendees join with.
    pub join_link: String,
    /// When the join link starts working.
    pub valid_from: DateTime<Utc>,
    /// When the join link stops working.
    pub valid_until: DateTime<Utc>,
    /// When the appointment was created.
    pub created_at: DateTime<Utc>,
    /// When it was last changed.
    pub updated_at: DateTime<Utc>,
}

impl Appointment {
    /// Whether the join link works at `now`.
    pub fn is_open_at(&self, now: DateTime<Utc>) -> bool {
        self.valid && self.valid_from <= now && now < self.valid_until
    }
}

/// Filters of the appointment list.
#[derive(Debug, Clone, Default)]
pub struct AppointmentFilter {
    /// Appointments starting at or after this time.
    pub from: Option<DateTime<Utc>>,
    /// Appointments starting before this time.
    pub to: Option<DateTime<Utc>>,
}
