//! The server side of the appointment pages: calendar arithmetic in the
//! tenant's zone, and turning the form into the service's input.

use chrono::{DateTime, Datelike, Duration, NaiveDate, NaiveDateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use rapport_core::{
    appointments::{Appointment, AppointmentFilter, AppointmentIn, ValidType},
    error::{CoreError, CoreResult, FieldError},
    model::{PageRequest, SessionUser},
    Services,
};

use super::{
    AppointmentForm, AppointmentView, Calendar, CalendarDay, CallRecordingView, OwnerChoices, APPOINTMENTS_PATH,
};

/// Most appointments a calendar page shows (a month of a busy team).
const MOST_PER_PAGE: i64 = 500;

/// Local midnight of `date` in `zone` (the first instant of the day).
fn midnight(zone: Tz, date: NaiveDate) -> DateTime<Utc> {
    let naive = date.and_hms_opt(0, 0, 0).unwrap_or_default();
    // A midnight that does not exist (a DST gap) starts the day an hour later.
    zone.from_local_datetime(&naive)
        .earliest()
        .or_else(|| zone.from_local_datetime(&(naive + Duration::hours(1))).earliest())
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&naive))
}

fn view_of(a: Appointment, calendar_zone: Tz) -> AppointmentView {
    let own_zone: Tz = a.timezone_id.parse().unwrap_or(calendar_zone);
    let start = a.date.with_timezone(&calendar_zone);
    let end = (a.date + Duration::minutes(a.duration_in_minutes.into())).with_timezone(&calendar_zone);
    let now = Utc::now();
    let link_state = if !a.valid {
        "DISABLED"
    } else if a.is_open_at(now) {
        "OPEN"
    } else if now < a.valid_from {
        "NOT_YET"
    } else {
        "CLOSED"
    };
    let in_own = |t: DateTime<Utc>| t.with_timezone(&own_zone).format("%a %-d %b %Y, %H:%M").to_string();
    let validity = if a.valid {
        format!(
            "The link works from {} to {} ({}).",
            in_own(a.valid_from),
            in_own(a.valid_until),
            a.timezone_id
        )
    } else {
        "The link is switched off.".to_string()
    };
    AppointmentView {
        start_local: a.date.with_timezone(&own_zone).format("%Y-%m-%dT%H:%M").to_string(),
        calendar_day: start.format("%Y-%m-%d").to_string(),
        calendar_time: format!("{}–{}", start.format("%H:%M"), end.format("%H:%M")),
        calendar_hour: start.hour(),
        id: a.id.into_string(),
        title: a.title,
        description: a.description.unwrap_or_default(),
        timezone_id: a.timezone_id,
        duration_minutes: a.duration_in_minutes,
        record: a.record,
        owner: a.owner.unwrap_or_default(),
        has_password: a.has_password,
        attendees: a.attendees,
        valid: a.valid,
        valid_type: match a.valid_type {
            ValidType::Hours => "HOURS",
            ValidType::Appointment => "APPOINTMENT",
        }
        .into(),
        valid_before: a.valid_before.unwrap_or(0),
        valid_after: a.valid_after.unwrap_or(0),
        join_link: a.join_link,
        validity,
        link_state: link_state.into(),
    }
}

async fn tenant_zone(services: &Services, tenant_id: &rapport_core::ids::TenantId) -> CoreResult<Tz> {
    let tenant = services.get_tenant(tenant_id).await?;
    Ok(tenant.timezone.parse().unwrap_or(chrono_tz::UTC))
}

/// The week (Monday first) or month grid around `date`, with its appointments.
pub(crate) async fn calendar(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    view: Option<&str>,
    date: Option<&str>,
) -> CoreResult<Calendar> {
    let zone = tenant_zone(services, tenant_id).await?;
    let today = Utc::now().with_timezone(&zone).date_naive();
    let date = date
        .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
        .unwrap_or(today);
    let month = view == Some("month");
    let (first, last, prev, next, title) = if month {
        let first_of_month = date.with_day(1).unwrap_or(date);
        let next_month = first_of_month
            .checked_add_months(chrono::Months::new(1))
            .unwrap_or(first_of_month);
        let prev_month = first_of_month
            .checked_sub_months(chrono::Months::new(1))
            .unwrap_or(first_of_month);
        // Whole weeks, Monday to Sunday, around the month.
        let first = first_of_month - Duration::days(first_of_month.weekday().num_days_from_monday().into());
        let last_of_month = next_month - Duration::days(1);
        let last = last_of_month + Duration::days((6 - last_of_month.weekday().num_days_from_monday()).into());
        (
            first,
            last,
            prev_month,
            next_month,
            first_of_month.format("%B %Y").to_string(),
        )
    } else {
        let monday = date - Duration::days(date.weekday().num_days_from_monday().into());
        let sunday = monday + Duration::days(6);
        let title = if monday.month() == sunday.month() {
            format!("{} – {}", monday.format("%-d"), sunday.format("%-d %b %Y"))
        } else {
            format!("{} – {}", monday.format("%-d %b"), sunday.format("%-d %b %Y"))
        };
        (
            monday,
            sunday,
            monday - Duration::days(7),
            monday + Duration::days(7),
            title,
        )
    };
    let period_month = date.month();
    let days = first
        .iter_days()
        .take_while(|d| *d <= last)
        .map(|d| CalendarDay {
            date: d.format("%Y-%m-%d").to_string(),
            label: d.format("%a %-d %b").to_string(),
            in_period: !month || d.month() == period_month,
            today: d == today,
        })
        .collect();
    let filter = AppointmentFilter {
        from: Some(midnight(zone, first)),
        to: Some(midnight(zone, last + Duration::days(1))),
    };
    let page = services
        .list_appointments(
            tenant_id,
            &filter,
            &PageRequest {
                page_number: Some(0),
                page_size: Some(MOST_PER_PAGE.min(PageRequest::MAX_PAGE_SIZE)),
                offset: None,
            },
        )
        .await?;
    Ok(Calendar {
        view: if month { "month" } else { "week" }.into(),
        zone: zone.name().into(),
        title,
        prev: prev.format("%Y-%m-%d").to_string(),
        next: next.format("%Y-%m-%d").to_string(),
        today: today.format("%Y-%m-%d").to_string(),
        days,
        appointments: page.results.into_iter().map(|a| view_of(a, zone)).collect(),
    })
}

/// The tenant's users, and the signed-in one.
pub(crate) async fn owners(services: &Services, user: &SessionUser) -> CoreResult<OwnerChoices> {
    let mut users = Vec::new();
    for number in 0.. {
        let page = services
            .list_users(
                &user.tenant_id,
                None,
                &PageRequest {
                    page_number: Some(number),
                    page_size: Some(PageRequest::MAX_PAGE_SIZE),
                    offset: None,
                },
            )
            .await?;
        let last = page.page.page_number + 1 >= page.page.total_pages;
        users.extend(page.results.into_iter().map(|u| {
            let name = u.display_name.filter(|n| !n.is_empty()).unwrap_or(u.email);
            (u.id.into_string(), name)
        }));
        if last {
            break;
        }
    }
    users.sort_by_key(|(_, name)| name.to_lowercase());
    Ok(OwnerChoices {
        users,
        me: user.id.to_string(),
        zone: tenant_zone(services, &user.tenant_id).await?.name().into(),
    })
}

/// One appointment, its calendar fields in the tenant's zone.
pub(crate) async fn get(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    id: &rapport_core::ids::AppointmentId,
) -> CoreResult<AppointmentView> {
    let zone = tenant_zone(services, tenant_id).await?;
    Ok(view_of(services.get_appointment(tenant_id, id).await?, zone))
}

/// The recordings of an appointment's calls, with times in the tenant's zone.
pub(crate) async fn recordings(
    services: &Services,
    tenant_id: &rapport_core::ids::TenantId,
    id: &rapport_core::ids::AppointmentId,
) -> CoreResult<Vec<CallRecordingView>> {
    let zone = tenant_zone(services, tenant_id).await?;
    let listed = services.list_conference_recordings(tenant_id, id).await?;
    Ok(listed
        .into_iter()
        .map(|r| {
            let seconds = r.duration_seconds;
            let duration = if seconds >= 3600 {
                format!("{}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60)
            } else {
                format!("{}:{:02}", seconds / 60, seconds % 60)
            };
            CallRecordingView {
                url: format!("{APPOINTMENTS_PATH}/{id}/recordings/{}", r.id),
                started: r.started_at.with_timezone(&zone).format("%Y-%m-%d %H:%M").to_string(),
                source: match r.source {
                    rapport_core::appointments::recordings::RecordingSource::Camera => "Camera",
                    rapport_core::appointments::recordings::RecordingSource::Screen => "Screen",
                }
                .into(),
                size: format!("{:.1} MB", r.size as f64 / 1_000_000.0),
                duration,
                participant: r.participant,
                id: r.id,
            }
        })
        .collect())
}

/// A whole number typed in a field, or a problem named after the API field.
fn number(text: &str, field: &str, default: i32, problems: &mut Vec<FieldError>) -> Option<i32> {
    let text = text.trim();
    if text.is_empty() {
        return Some(default);
    }
    match text.parse() {
        Ok(n) => Some(n),
        Err(_) => {
            problems.push(FieldError::new(
                field,
                "invalid_number",
                format!("{text:?} is not a whole number"),
            ));
            None
        }
    }
}

/// The service's input for a posted form: the local start read in its zone.
pub(crate) fn input(form: AppointmentForm) -> CoreResult<AppointmentIn> {
    let mut problems = Vec::new();
    let zone_name = form.timezone.trim().to_string();
    let zone: Option<Tz> = match zone_name.parse() {
        Ok(z) => Some(z),
        Err(_) => {
            problems.push(FieldError::new(
                "timezoneId",
                "invalid_timezone",
                "choose an IANA time zone, e.g. Europe/Berlin",
            ));
            None
        }
    };
    let date = match NaiveDateTime::parse_from_str(form.start.trim(), "%Y-%m-%dT%H:%M") {
        Ok(local) => zone.and_then(|z| {
            // In the autumn's repeated hour the earlier instant is meant; a
            // time in the spring's skipped hour does not exist.
            let found = z.from_local_datetime(&local).earliest().map(|t| t.with_timezone(&Utc));
            if found.is_none() {
                problems.push(FieldError::new(
                    "date",
                    "nonexistent_time",
                    "that time does not exist in this zone (the clocks skip it)",
                ));
            }
            found
        }),
        Err(_) => {
            problems.push(FieldError::new("date", "required", "give the day and time it starts"));
            None
        }
    };
    let duration = number(&form.duration, "durationInMinutes", 30, &mut problems);
    let hours = form.valid_type == "HOURS";
    let valid_before = number(&form.valid_before, "validBefore", 0, &mut problems);
    let valid_after = number(&form.valid_after, "validAfter", 0, &mut problems);
    if !problems.is_empty() {
        return Err(CoreError::Validation(problems));
    }
    let attendees: Vec<String> = form
        .attendees
        .split([',', '\n', ';'])
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect();
    let password = Some(form.password).filter(|p| !p.is_empty());
    Ok(AppointmentIn {
        title: Some(form.title.trim().to_string()),
        description: Some(form.description.trim().to_string()).filter(|d| !d.is_empty()),
        duration_in_minutes: duration,
        date,
        timezone_id: Some(zone_name),
        record: Some(form.record.is_some()),
        owner: Some(form.owner).filter(|o| !o.is_empty()),
        password,
        attendees: Some(attendees),
        send_invite_email: Some(form.invite.is_some()),
        customer_id: None,
        valid: Some(form.link_enabled.is_some()),
        valid_after: hours.then_some(valid_after).flatten(),
        valid_before: hours.then_some(valid_before).flatten(),
        valid_type: Some(if hours {
            ValidType::Hours
        } else {
            ValidType::Appointment
        }),
        custom_properties: None,
        permissions: None,
    })
}

/// Creates (no `id`) or replaces an appointment from the form. A replaced one
/// keeps its customer, custom properties and permissions, which the form does
/// not show.
pub(crate) async fn save(
    services: &Services,
    user: &SessionUser,
    id: Option<rapport_core::ids::AppointmentId>,
    form: AppointmentForm,
) -> CoreResult<AppointmentView> {
    let actor = crate::ssr::actor(user);
    let mut input = input(form)?;
    let saved = match id {
        None => {
            if input.owner.is_none() {
                input.owner = Some(user.id.to_string());
            }
            services.create_appointment(&user.tenant_id, input, &actor).await?
        }
        Some(id) => {
            let current = services.get_appointment(&user.tenant_id, &id).await?;
            input.customer_id = current.customer_id;
            input.custom_properties = Some(current.custom_properties);
            input.permissions = Some(current.permissions);
            services.update_appointment(&user.tenant_id, &id, input, &actor).await?
        }
    };
    let zone = tenant_zone(services, &user.tenant_id).await?;
    Ok(view_of(saved, zone))
}

#[cfg(test)]
mod tests {
    use chrono::Weekday;

    use super::*;

    fn form(start: &str, zone: &str) -> AppointmentForm {
        AppointmentForm {
            title: " Review ".into(),
            start: start.into(),
            timezone: zone.into(),
            attendees: "a@example.com, b@example.com\nc@example.com".into(),
            valid_type: "HOURS".into(),
            valid_before: "1".into(),
            link_enabled: Some("on".into()),
            ..Default::default()
        }
    }

    #[test]
    fn a_local_start_is_read_in_its_zone() {
        let input = input(form("2026-07-01T09:30", "Europe/Berlin")).unwrap();
        assert_eq!(input.date.unwrap().to_rfc3339(), "2026-07-01T07:30:00+00:00");
        assert_eq!(input.attendees.unwrap().len(), 3);
        assert_eq!(input.duration_in_minutes, Some(30));
        assert_eq!((input.valid_before, input.valid_after), (Some(1), Some(0)));
        assert_eq!(input.valid, Some(true));
        assert_eq!(input.title.as_deref(), Some("Review"));
    }

    #[test]
    fn a_time_the_clocks_skip_and_bad_fields_are_problems() {
        let Err(CoreError::Validation(fields)) = input(form("2026-03-29T02:30", "Europe/Berlin")) else {
            panic!("the skipped hour must be refused");
        };
        assert_eq!(fields[0].field, "date");
        let mut bad = form("soon", "Mars/Base");
        bad.duration = "half an hour".into();
        let Err(CoreError::Validation(fields)) = input(bad) else {
            panic!("expected problems");
        };
        let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
        assert_eq!(names, ["timezoneId", "date", "durationInMinutes"]);
    }

    #[test]
    fn a_week_starts_on_monday_and_midnights_follow_the_zone() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 3, 29).unwrap();
        assert_eq!(midnight(berlin, day).to_rfc3339(), "2026-03-28T23:00:00+00:00");
        assert_eq!(day.weekday(), Weekday::Sun);
    }
}
