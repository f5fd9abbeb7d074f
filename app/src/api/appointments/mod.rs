//! Appointments from the dashboard (agents and up): the calendar, and the same
//! services as `/rest/v1/appointment`.
//!
//! Calendar arithmetic happens here, on the server, in the tenant's time zone:
//! the browser bundle carries no zone database. The calendar names its days and
//! gives each appointment its local day and time; forms send a local date and
//! time with a zone, which the server turns into an instant.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where the calendar lives.
pub const APPOINTMENTS_PATH: &str = "/appointments";

/// An appointment as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AppointmentView {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// Description.
    pub description: String,
    /// Start in the appointment's zone, `YYYY-MM-DDTHH:MM` (for the form).
    pub start_local: String,
    /// The appointment's IANA zone.
    pub timezone_id: String,
    /// Length in minutes.
    pub duration_minutes: i32,
    /// In the calendar's zone: the day, `YYYY-MM-DD`.
    pub calendar_day: String,
    /// In the calendar's zone: `09:30–10:15`.
    pub calendar_time: String,
    /// In the calendar's zone: the hour it starts in (0–23).
    pub calendar_hour: u32,
    /// Automatic recording.
    pub record: bool,
    /// Owner's user id.
    pub owner: String,
    /// Whether a password is set.
    pub has_password: bool,
    /// Attendee e-mails.
    pub attendees: Vec<String>,
    /// Whether the join link works at all.
    pub valid: bool,
    /// `APPOINTMENT` or `HOURS`.
    pub valid_type: String,
    /// Hours before the start the link works (`HOURS`).
    pub valid_before: i32,
    /// Hours after the end the link works (`HOURS`).
    pub valid_after: i32,
    /// The link attendees join with.
    pub join_link: String,
    /// When the link works, in words and the appointment's zone.
    pub validity: String,
    /// `OPEN`, `NOT_YET`, `CLOSED` or `DISABLED`.
    pub link_state: String,
}

/// One day of the calendar grid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalendarDay {
    /// `YYYY-MM-DD`.
    pub date: String,
    /// `Mon 23 Nov`.
    pub label: String,
    /// Whether it belongs to the month shown (month view).
    pub in_period: bool,
    /// Whether it is today in the calendar's zone.
    pub today: bool,
}

/// A week or a month of appointments in the tenant's zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Calendar {
    /// `week` or `month`.
    pub view: String,
    /// The zone the grid is cut in.
    pub zone: String,
    /// `23 – 29 Nov 2026` or `November 2026`.
    pub title: String,
    /// A date in the previous and the next period, and today.
    pub prev: String,
    /// See `prev`.
    pub next: String,
    /// Today, `YYYY-MM-DD`.
    pub today: String,
    /// The grid's days, Monday first.
    pub days: Vec<CalendarDay>,
    /// The appointments starting in the grid, by start.
    pub appointments: Vec<AppointmentView>,
}

/// Who may own an appointment: `(id, name or e-mail)`, and the signed-in user's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnerChoices {
    /// The tenant's users.
    pub users: Vec<(String, String)>,
    /// The signed-in user.
    pub me: String,
    /// The tenant's zone, the default of new appointments.
    pub zone: String,
}

/// The fields of the appointment form, as posted (`form[title]`, …); an
/// unticked checkbox is absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AppointmentForm {
    /// Title.
    pub title: String,
    /// Start, `YYYY-MM-DDTHH:MM` in `timezone`.
    pub start: String,
    /// IANA zone.
    pub timezone: String,
    /// Minutes.
    pub duration: String,
    /// Description.
    pub description: String,
    /// E-mails, separated by commas or lines.
    pub attendees: String,
    /// Owner's user id.
    pub owner: String,
    /// New password; empty keeps the current one.
    pub password: String,
    /// `APPOINTMENT` or `HOURS`.
    pub valid_type: String,
    /// Hours before (`HOURS`).
    pub valid_before: String,
    /// Hours after (`HOURS`).
    pub valid_after: String,
    /// Checkbox: the link works.
    pub link_enabled: Option<String>,
    /// Checkbox: record.
    pub record: Option<String>,
    /// Checkbox: send invitations on save.
    pub invite: Option<String>,
}

/// A recording of an appointment's call, as its page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallRecordingView {
    /// Id.
    pub id: String,
    /// Who was recorded.
    pub participant: String,
    /// "Camera" or "Screen".
    pub source: String,
    /// When it started, in the tenant's zone (`YYYY-MM-DD HH:MM`).
    pub started: String,
    /// Its length, `m:ss` (or `h:mm:ss`).
    pub duration: String,
    /// Its size, e.g. `12.4 MB`.
    pub size: String,
    /// The download link.
    pub url: String,
}

#[cfg(feature = "ssr")]
pub(crate) mod server;

#[cfg(feature = "ssr")]
async fn agent() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Agent).await
}

/// A week (`view = week`) or month around `date` (`YYYY-MM-DD`, default today),
/// in the tenant's zone.
#[server(endpoint = "appointment_calendar")]
pub async fn appointment_calendar(view: Option<String>, date: Option<String>) -> Result<Calendar, ServerFnError> {
    let (ctx, user) = agent().await?;
    server::calendar(&ctx.services, &user.tenant_id, view.as_deref(), date.as_deref())
        .await
        .map_err(crate::ssr::to_server_error)
}

/// The users who may own an appointment.
#[server(endpoint = "appointment_owners")]
pub async fn appointment_owners() -> Result<OwnerChoices, ServerFnError> {
    let (ctx, user) = agent().await?;
    server::owners(&ctx.services, &user)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// One appointment.
#[server(endpoint = "get_appointment")]
pub async fn get_appointment(id: String) -> Result<AppointmentView, ServerFnError> {
    let id = rapport_core::ids::AppointmentId::from(id);
    let (ctx, user) = agent().await?;
    server::get(&ctx.services, &user.tenant_id, &id)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Creates an appointment, then opens it.
#[server(endpoint = "add_appointment")]
pub async fn add_appointment(form: AppointmentForm) -> Result<AppointmentView, ServerFnError> {
    let (ctx, user) = agent().await?;
    let created = server::save(&ctx.services, &user, None, form)
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(&format!("{APPOINTMENTS_PATH}/{}", created.id));
    Ok(created)
}

/// Replaces an appointment (its join link stays the same).
#[server(endpoint = "edit_appointment")]
pub async fn edit_appointment(id: String, form: AppointmentForm) -> Result<AppointmentView, ServerFnError> {
    let id = rapport_core::ids::AppointmentId::from(id);
    let (ctx, user) = agent().await?;
    server::save(&ctx.services, &user, Some(id), form)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// The recordings of an appointment's calls, oldest first.
#[server(endpoint = "appointment_recordings")]
pub async fn appointment_recordings(id: String) -> Result<Vec<CallRecordingView>, ServerFnError> {
    let id = rapport_core::ids::AppointmentId::from(id);
    let (ctx, user) = agent().await?;
    server::recordings(&ctx.services, &user.tenant_id, &id)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Switches automatic recording on or off.
#[server(endpoint = "set_appointment_recording")]
pub async fn set_appointment_recording(id: String, record: bool) -> Result<AppointmentView, ServerFnError> {
    let id = rapport_core::ids::AppointmentId::from(id);
    let (ctx, user) = agent().await?;
    ctx.services
        .set_appointment_record(&user.tenant_id, &id, record, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    server::get(&ctx.services, &user.tenant_id, &id)
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Writes an invitation to every attendee; returns how many.
#[server(endpoint = "send_appointment_invitations")]
pub async fn send_appointment_invitations(id: String) -> Result<usize, ServerFnError> {
    let id = rapport_core::ids::AppointmentId::from(id);
    let (ctx, user) = agent().await?;
    ctx.services
        .invite_attendees(&user.tenant_id, &id, false, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)
}

/// Deletes an appointment, then shows the calendar.
#[server(endpoint = "remove_appointment")]
pub async fn remove_appointment(id: String) -> Result<(), ServerFnError> {
    let id = rapport_core::ids::AppointmentId::from(id);
    let (ctx, user) = agent().await?;
    ctx.services
        .delete_appointment(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(APPOINTMENTS_PATH);
    Ok(())
}
