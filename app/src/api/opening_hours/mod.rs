//! Opening hours from the dashboard (admins): a weekly editor's view of
//! `/rest/v1/openinghours`. The editor shows one row of intervals per weekday;
//! stored conditions that name several days (`WORKDAYS`, `EVERYDAY`, `WEEKEND`)
//! are shown on each of their days and saved back as one condition per day,
//! which means the same.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where opening hours are managed.
pub const OPENING_HOURS_PATH: &str = "/settings/opening-hours";

/// The days of the editor, in the API's names.
pub const DAYS: [(&str, &str); 7] = [
    ("MONDAY", "Monday"),
    ("TUESDAY", "Tuesday"),
    ("WEDNESDAY", "Wednesday"),
    ("THURSDAY", "Thursday"),
    ("FRIDAY", "Friday"),
    ("SATURDAY", "Saturday"),
    ("SUNDAY", "Sunday"),
];

/// One interval of one day, times as `HH:MM`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IntervalForm {
    /// `MONDAY` … `SUNDAY`.
    pub day: String,
    /// Start, `HH:MM`; empty for an unused slot.
    pub start: String,
    /// End, `HH:MM`.
    pub end: String,
}

/// One holiday, dates as `YYYY-MM-DD`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HolidayForm {
    /// Name.
    pub name: String,
    /// First day off; empty for an unused slot.
    pub from: String,
    /// Last day off (the first when empty).
    pub to: String,
    /// Checkbox, present means on: the same dates every year (`fixedDate`).
    pub every_year: Option<String>,
}

/// Whether opening hours are open now, as the dashboard says it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoursNow {
    /// The opening hours' id.
    pub id: String,
    /// Whether they are open now.
    pub open: bool,
    /// E.g. "Open now — closes at 18:00 (Europe/Berlin)" or "Closed — opens at
    /// 09:00 on Monday (Europe/Berlin)": local times in the hours' own zone.
    pub text: String,
}

/// Opening hours as the editor shows and posts them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HoursForm {
    /// Id; empty for new opening hours.
    pub id: String,
    /// Name.
    pub name: String,
    /// IANA time zone.
    pub timezone: String,
    /// Intervals, grouped by day in the editor.
    pub intervals: Vec<IntervalForm>,
    /// Days off.
    pub holidays: Vec<HolidayForm>,
}

impl HoursForm {
    /// The intervals of `day`, in order.
    pub fn day(&self, day: &str) -> Vec<IntervalForm> {
        let mut out: Vec<IntervalForm> = self.intervals.iter().filter(|i| i.day == day).cloned().collect();
        out.sort_by(|a, b| a.start.cmp(&b.start));
        out
    }

    /// A one-line summary, e.g. "Mon 09:00–12:00, 13:00–17:00 · Sat 10:00–14:00".
    pub fn summary(&self) -> String {
        let parts: Vec<String> = DAYS
            .iter()
            .filter_map(|(day, name)| {
                let times: Vec<String> = self.day(day).iter().map(|i| format!("{}–{}", i.start, i.end)).collect();
                (!times.is_empty()).then(|| format!("{} {}", &name[..3], times.join(", ")))
            })
            .collect();
        if parts.is_empty() {
            "Closed every day".into()
        } else {
            parts.join(" · ")
        }
    }
}

#[cfg(feature = "ssr")]
mod convert;

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// What the dashboard says of `schedule` at `now`, in the hours' own zone.
#[cfg(feature = "ssr")]
pub fn describe_now(
    id: String,
    schedule: &rapport_core::config::opening_hours::schedule::Schedule,
    now: chrono::DateTime<chrono::Utc>,
) -> HoursNow {
    let open = schedule.is_open(now);
    let when = schedule.next_change(now).map(|change| {
        let (today, then) = (schedule.local(now), schedule.local(change));
        let time = then.format("%H:%M");
        let days = (then.date_naive() - today.date_naive()).num_days();
        match days {
            0 => format!("at {time}"),
            1 => format!("at {time} tomorrow"),
            2..=6 => format!("at {time} on {}", then.format("%A")),
            _ => format!("at {time} on {}", then.format("%a %-d %b %Y")),
        }
    });
    let state = match (open, when) {
        (true, Some(when)) => format!("Open now — closes {when}"),
        (false, Some(when)) => format!("Closed — opens {when}"),
        (true, None) => "Open now — no closing time within two years".to_string(),
        (false, None) => "Closed — no opening time within two years".to_string(),
    };
    HoursNow {
        id,
        open,
        text: format!("{state} ({})", schedule.zone_name()),
    }
}

/// Whether opening hours are open now: those with `id`, or all of the tenant's
/// when `id` is `None`. `new` (the editor of hours not yet saved) has none.
#[server(endpoint = "opening_hours_now")]
pub async fn opening_hours_now(id: Option<String>) -> Result<Vec<HoursNow>, ServerFnError> {
    use rapport_core::config::opening_hours::{schedule::Schedule, OpeningHours};
    let (ctx, user) = admin().await?;
    let now = chrono::Utc::now();
    let all = match id.as_deref() {
        Some("new") => Vec::new(),
        Some(id) => vec![ctx
            .services
            .config_get::<OpeningHours>(&user.tenant_id, id)
            .await
            .map_err(crate::ssr::to_server_error)?],
        None => ctx
            .services
            .config_all::<OpeningHours>(&user.tenant_id)
            .await
            .map_err(crate::ssr::to_server_error)?,
    };
    Ok(all
        .iter()
        .map(|h| describe_now(h.meta.id.clone().unwrap_or_default(), &Schedule::new(h), now))
        .collect())
}

/// Every opening hours object of the tenant.
#[server(endpoint = "list_opening_hours")]
pub async fn list_opening_hours() -> Result<Vec<HoursForm>, ServerFnError> {
    use rapport_core::config::opening_hours::OpeningHours;
    let (ctx, user) = admin().await?;
    Ok(ctx
        .services
        .config_all::<OpeningHours>(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .map(convert::to_form)
        .collect())
}

/// One opening hours object; `new` gives an empty one in the tenant's zone.
#[server(endpoint = "get_opening_hours")]
pub async fn get_opening_hours(id: String) -> Result<HoursForm, ServerFnError> {
    use rapport_core::config::opening_hours::OpeningHours;
    let (ctx, user) = admin().await?;
    if id == "new" {
        let tenant = ctx
            .services
            .get_tenant(&user.tenant_id)
            .await
            .map_err(crate::ssr::to_server_error)?;
        return Ok(HoursForm {
            timezone: tenant.timezone,
            ..Default::default()
        });
    }
    ctx.services
        .config_get::<OpeningHours>(&user.tenant_id, &id)
        .await
        .map(convert::to_form)
        .map_err(crate::ssr::to_server_error)
}

/// Saves the editor's form (creates when it has no id) and opens the saved object.
#[server(endpoint = "save_opening_hours_form")]
pub async fn save_opening_hours_form(form: HoursForm) -> Result<HoursForm, ServerFnError> {
    use rapport_core::config::opening_hours::OpeningHours;
    let (ctx, user) = admin().await?;
    let (mut hours, condition_rows, holiday_rows) = convert::from_form(&form).map_err(|p| {
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        }
        p.into_error()
    })?;
    if !form.id.is_empty() {
        let stored = ctx
            .services
            .config_get::<OpeningHours>(&user.tenant_id, &form.id)
            .await
            .map_err(crate::ssr::to_server_error)?;
        convert::keep_unshown(&stored, &mut hours);
    }
    let saved = ctx
        .services
        .save_opening_hours(&user.tenant_id, hours, &crate::ssr::actor(&user))
        .await
        .map_err(|e| {
            let error = crate::ssr::to_server_error(e);
            let problem = crate::api::problem::Problem::of(&error);
            if problem.fields.is_empty() {
                error
            } else {
                convert::to_rows(problem, &condition_rows, &holiday_rows).into_error()
            }
        })?;
    let saved = convert::to_form(saved);
    if form.id.is_empty() {
        leptos_axum::redirect(&format!("{OPENING_HOURS_PATH}/{}", saved.id));
    }
    Ok(saved)
}

/// Deletes opening hours that no rule uses, then shows the list.
#[server(endpoint = "delete_opening_hours_entry")]
pub async fn delete_opening_hours_entry(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_opening_hours(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(OPENING_HOURS_PATH);
    Ok(())
}

#[cfg(all(test, feature = "ssr"))]
mod tests {
    use rapport_core::config::opening_hours::{Holiday, OpeningHours};

    use super::{convert, HolidayForm, HoursForm};

    #[test]
    fn saving_in_the_editor_keeps_what_it_does_not_show() {
        let new_year: chrono::DateTime<chrono::Utc> = "2027-01-01T00:00:00Z".parse().unwrap();
        let stored = OpeningHours {
            timezone_offset: Some(120),
            holidays: vec![Holiday {
                name: Some("New Year".into()),
                from_date: Some(new_year),
                to_date: Some(new_year + chrono::Duration::hours(12)),
                country_code: Some("DE".into()),
                imported: Some(true),
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut form = convert::to_form(stored.clone());
        form.name = "Shop".into();
        form.holidays.push(HolidayForm {
            name: "Closed".into(),
            from: "2027-02-01".into(),
            ..Default::default()
        });
        let (mut hours, ..) = convert::from_form(&form).unwrap();
        convert::keep_unshown(&stored, &mut hours);
        assert_eq!(hours.timezone_offset, Some(120));
        assert_eq!(hours.holidays[0], stored.holidays[0]);
        // A holiday the editor added has nothing to keep.
        assert_eq!(hours.holidays[1].country_code, None);
        // A zone chosen in the editor replaces the offset.
        let zoned = HoursForm {
            timezone: "Europe/Berlin".into(),
            ..form
        };
        let (mut hours, ..) = convert::from_form(&zoned).unwrap();
        convert::keep_unshown(&stored, &mut hours);
        assert_eq!(hours.timezone_offset, None);
    }
}
