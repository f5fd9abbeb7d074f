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
mod types;
mod validation;

use chrono::Duration;

use crate::{
    audit::{self, Actor},
    crypto::{random_token, token_digest},
    db::TenantTable,
    error::{CoreError, CoreResult},
    ids::{AppointmentId, CustomerId, TenantId},
    live::LiveEvent,
    model::{Page, PageRequest},
    sealing::{Purpose, Sealer},
    time::{from_ms, now_ms},
    validate::Paging,
    with_db, with_tx, Services,
};

pub use types::{
    Appointment, AppointmentFilter, AppointmentIn, AppointmentPermissions, AppointmentRecordPatch, ValidType,
};

#[derive(sqlx::FromRow)]
struct AppointmentRow {
    id: AppointmentId,
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
        let id = AppointmentId::new(uuid::Uuid::now_v7().to_string());
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
        id: &AppointmentId,
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
            appointment_id: id.clone(),
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
        id: &AppointmentId,
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
            appointment_id: id.clone(),
            record,
        };
        self.commit_live(tx, tenant_id, &CustomerId::default(), switched)
            .await?;
        self.get_appointment(tenant_id, id).await
    }

    /// One appointment of the tenant.
    pub async fn get_appointment(&self, tenant_id: &TenantId, id: &AppointmentId) -> CoreResult<Appointment> {
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
            id: AppointmentId,
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
    pub async fn delete_appointment(&self, tenant_id: &TenantId, id: &AppointmentId, actor: &Actor) -> CoreResult<()> {
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
