//! Video-conference appointments (spec 2.11).
//!
//! Decisions where the spec is silent:
//! - `title` and `date` are required; `durationInMinutes` defaults to 30 (1–1440);
//!   `timezoneId` defaults to the tenant's time zone;
//! - `owner` is a user of the tenant, given by id or e-mail, stored and returned as id;
//! - the password is hashed (argon2id) and never returned; `hasPassword` says whether
//!   one is set; a `PUT` without `password` keeps it;
//! - the join link `…/join/{token}` opens, with `validType` `APPOINTMENT`, from the
//!   start to the end of the appointment, and with `HOURS`, from `validBefore` hours
//!   before the start to `validAfter` hours after the end; `valid: false` disables it.
//!   The token is random (256 bits). It is found by its digest, and kept sealed
//!   with the operator's key (see [`crate::sealing`]) so the link can be shown again.
//! - `sendInviteEmail` true on a create or an update writes an invitation (on an
//!   update, marked as such) to every attendee into the mail outbox (see
//!   [`crate::mail`]); it is also kept on the appointment.

pub mod calls;
mod conference;
pub mod recordings;
mod validation;

use std::collections::BTreeMap;

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    crypto::{random_token, token_digest},
    db::TenantTable,
    error::{CoreError, CoreResult},
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    model::{Page, PageRequest},
    sealing::{Purpose, Sealer},
    time::{from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

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
    fn as_str(self) -> &'static str {
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
    pub id: String,
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

#[derive(sqlx::FromRow)]
struct AppointmentRow {
    id: String,
    title: String,
    description: Option<String>,
    duration_minutes: i32,
    starts_at: i64,
    timezone_id: String,
    record: bool,
    owner_user_id: Option<String>,
    has_password: bool,
    attendees: String,
    send_invite_email: bool,
    customer_id: Option<CustomerId>,
    valid: bool,
    valid_type: String,
    valid_after: Option<i32>,
    valid_before: Option<i32>,
    custom_properties: String,
    permissions: String,
    join_token: String,
    created_at: i64,
    updated_at: i64,
}

const COLUMNS: &str = "id, title, description, duration_minutes, starts_at, timezone_id, record, owner_user_id, \
     password_hash is not null as has_password, attendees, send_invite_email, customer_id, valid, valid_type, \
     valid_after, valid_before, custom_properties, permissions, join_token, created_at, updated_at";

/// The appointments table, as [`AppointmentRow`] reads it.
const APPOINTMENTS: TenantTable = TenantTable {
    table: "appointments",
    columns: COLUMNS,
    what: "appointment",
    narrow: "",
};

impl AppointmentRow {
    fn into_appointment(self, public_url: &str, sealer: &Sealer) -> CoreResult<Appointment> {
        let join_token = sealer.open(Purpose::JoinToken, &self.join_token)?;
        let valid_type = if self.valid_type == "HOURS" {
            ValidType::Hours
        } else {
            ValidType::Appointment
        };
        let start = from_ms(self.starts_at);
        let end = start + Duration::minutes(self.duration_minutes.into());
        let (valid_from, valid_until) = match valid_type {
            ValidType::Appointment => (start, end),
            ValidType::Hours => (
                start - Duration::hours(self.valid_before.unwrap_or(0).into()),
                end + Duration::hours(self.valid_after.unwrap_or(0).into()),
            ),
        };
        Ok(Appointment {
            join_link: format!("{public_url}/join/{join_token}"),
            id: self.id,
            title: self.title,
            description: self.description,
            duration_in_minutes: self.duration_minutes,
            date: start,
            timezone_id: self.timezone_id,
            record: self.record,
            owner: self.owner_user_id,
            has_password: self.has_password,
            attendees: serde_json::from_str(&self.attendees).unwrap_or_default(),
            send_invite_email: self.send_invite_email,
            customer_id: self.customer_id,
            valid: self.valid,
            valid_after: self.valid_after,
            valid_before: self.valid_before,
            valid_type,
            custom_properties: serde_json::from_str(&self.custom_properties).unwrap_or_default(),
            permissions: serde_json::from_str(&self.permissions).unwrap_or_default(),
            valid_from,
            valid_until,
            created_at: from_ms(self.created_at),
            updated_at: from_ms(self.updated_at),
        })
    }
}

impl Services {
    /// Creates an appointment with a fresh join link.
    pub async fn create_appointment(
        &self,
        tenant_id: &TenantId,
        input: AppointmentIn,
        actor: &Actor,
    ) -> CoreResult<Appointment> {
        let v = self.validate_appointment(tenant_id, input).await?;
        if v.send_invite_email {
            self.ensure_mail_allowance(tenant_id, v.attendees.len()).await?;
        }
        let id = uuid::Uuid::now_v7().to_string();
        let join_token = random_token(32);
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "insert into appointments (id, tenant_id, title, description, duration_minutes, starts_at, timezone_id, record, \
             owner_user_id, password_hash, attendees, send_invite_email, customer_id, valid, valid_type, valid_after, \
             valid_before, custom_properties, permissions, join_token, join_token_hash, created_at, updated_at) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $22)"
        )
        .bind(&id)
        .bind(tenant_id)
        .bind(&v.title)
        .bind(&v.description)
        .bind(v.duration)
        .bind(v.starts_at)
        .bind(&v.timezone_id)
        .bind(v.record)
        .bind(&v.owner)
        .bind(&v.password_hash)
        .bind(serde_json::to_string(&v.attendees).unwrap_or_default())
        .bind(v.send_invite_email)
        .bind(&v.customer_id)
        .bind(v.valid)
        .bind(v.valid_type.as_str())
        .bind(v.valid_after)
        .bind(v.valid_before)
        .bind(serde_json::to_string(&v.custom_properties).unwrap_or_default())
        .bind(serde_json::to_string(&v.permissions).unwrap_or_default())
        .bind(self.sealer().seal(Purpose::JoinToken, &join_token))
        .bind(token_digest(&join_token))
        .bind(now)
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "appointment.create",
            "appointment",
            Some(&id),
        )
        .await?;
        tx.commit().await?;
        if v.send_invite_email {
            self.invite_attendees(tenant_id, &id, false, actor).await?;
        }
        self.get_appointment(tenant_id, &id).await
    }

    /// Replaces an appointment (title required); an omitted password keeps the
    /// current one. The join link stays the same.
    pub async fn update_appointment(
        &self,
        tenant_id: &TenantId,
        id: &str,
        input: AppointmentIn,
        actor: &Actor,
    ) -> CoreResult<Appointment> {
        self.get_appointment(tenant_id, id).await?;
        let v = self.validate_appointment(tenant_id, input).await?;
        if v.send_invite_email {
            self.ensure_mail_allowance(tenant_id, v.attendees.len()).await?;
        }
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| {
            sqlx::query(
            "update appointments set title = $3, description = $4, duration_minutes = $5, starts_at = $6, timezone_id = $7, \
             record = $8, owner_user_id = $9, password_hash = coalesce($10, password_hash), attendees = $11, \
             send_invite_email = $12, customer_id = $13, valid = $14, valid_type = $15, valid_after = $16, valid_before = $17, \
             custom_properties = $18, permissions = $19, updated_at = $20 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(&v.title)
        .bind(&v.description)
        .bind(v.duration)
        .bind(v.starts_at)
        .bind(&v.timezone_id)
        .bind(v.record)
        .bind(&v.owner)
        .bind(&v.password_hash)
        .bind(serde_json::to_string(&v.attendees).unwrap_or_default())
        .bind(v.send_invite_email)
        .bind(&v.customer_id)
        .bind(v.valid)
        .bind(v.valid_type.as_str())
        .bind(v.valid_after)
        .bind(v.valid_before)
        .bind(serde_json::to_string(&v.custom_properties).unwrap_or_default())
        .bind(serde_json::to_string(&v.permissions).unwrap_or_default())
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
        })?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "appointment.update",
            "appointment",
            Some(id),
        )
        .await?;
        // A call going on now starts or stops recording with the switch.
        let switched = LiveEvent::AppointmentRecording {
            appointment_id: id.to_string(),
            record: v.record,
        };
        self.commit_live(tx, tenant_id, &CustomerId::default(), switched)
            .await?;
        if v.send_invite_email {
            self.invite_attendees(tenant_id, id, true, actor).await?;
        }
        self.get_appointment(tenant_id, id).await
    }

    /// Switches automatic recording on or off.
    pub async fn set_appointment_record(
        &self,
        tenant_id: &TenantId,
        id: &str,
        record: bool,
        actor: &Actor,
    ) -> CoreResult<Appointment> {
        self.get_appointment(tenant_id, id).await?;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update appointments set record = $3, updated_at = $4 where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(record)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "appointment.record",
            "appointment",
            Some(id),
        )
        .await?;
        let switched = LiveEvent::AppointmentRecording {
            appointment_id: id.to_string(),
            record,
        };
        self.commit_live(tx, tenant_id, &CustomerId::default(), switched)
            .await?;
        self.get_appointment(tenant_id, id).await
    }

    /// One appointment of the tenant.
    pub async fn get_appointment(&self, tenant_id: &TenantId, id: &str) -> CoreResult<Appointment> {
        APPOINTMENTS
            .get::<AppointmentRow>(self.db(), tenant_id, id)
            .await?
            .into_appointment(self.public_url(), self.sealer())
    }

    /// The appointment behind a join link, in any tenant (the link is the credential).
    pub async fn appointment_by_join_token(&self, token: &str) -> CoreResult<(TenantId, Appointment)> {
        #[derive(sqlx::FromRow)]
        struct Found {
            tenant_id: TenantId,
            id: String,
        }
        let found: Option<Found> = with_db!(self.db(), |pool| sqlx::query_as(
            "select tenant_id, id from appointments where join_token_hash = $1"
        )
        .bind(token_digest(token))
        .fetch_optional(pool)
        .await)?;
        let found = found.ok_or(CoreError::NotFound("appointment"))?;
        let appointment = self.get_appointment(&found.tenant_id, &found.id).await?;
        Ok((found.tenant_id, appointment))
    }

    /// A page of the tenant's appointments by start time.
    pub async fn list_appointments(
        &self,
        tenant_id: &TenantId,
        filter: &AppointmentFilter,
        page: &PageRequest,
    ) -> CoreResult<Page<Appointment>> {
        let paging = Paging::from_request(page)?;
        let from = filter.from.map(|t| t.timestamp_millis());
        let to = filter.to.map(|t| t.timestamp_millis());
        let condition = "tenant_id = $1 and ($2 is null or starts_at >= $2) and ($3 is null or starts_at < $3)";
        let count_sql = format!("select count(*) from appointments where {condition}");
        let sql =
            format!("select {COLUMNS} from appointments where {condition} order by starts_at, id limit $4 offset $5");
        let (total, rows): (i64, Vec<AppointmentRow>) = crate::db::page(
            self.db(),
            &count_sql,
            &sql,
            &[tenant_id.into(), from.into(), to.into()],
            &paging,
        )
        .await?;
        let public_url = self.public_url().to_string();
        Ok(paging.page(
            total,
            rows.into_iter()
                .map(|r| r.into_appointment(&public_url, self.sealer()))
                .collect::<CoreResult<_>>()?,
        ))
    }

    /// Deletes an appointment; its join link stops working.
    pub async fn delete_appointment(&self, tenant_id: &TenantId, id: &str, actor: &Actor) -> CoreResult<()> {
        self.get_appointment(tenant_id, id).await?;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from appointments where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(
            &mut tx,
            Some(tenant_id),
            actor,
            "appointment.delete",
            "appointment",
            Some(id),
        )
        .await?;
        tx.commit().await
    }
}
