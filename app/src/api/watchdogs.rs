//! Watchdogs of the tenant, from the dashboard (admins): the same services as
//! `/rest/v1/watchdog`. A watchdog alerts its receivers (e-mail addresses, users
//! of the tenant, webhook URLs) when something of its kind happens.
//!
//! The form sends receivers as two parallel lists, `receiver_type[]` and
//! `receiver_value[]`, one entry per row; rows left empty are dropped. The
//! service names problems by the index among the kept receivers, so they are
//! renamed back to the row the admin typed in.

use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// Where watchdogs are managed.
pub const WATCHDOGS_PATH: &str = "/settings/watchdogs";

/// The kinds of watchdog, as the API names them, with how the page describes them.
pub const WATCHDOG_TYPES: [(&str, &str); 5] = [
    ("JAVASCRIPT_ERROR", "A script error on your site"),
    ("MESSAGE_RECEIVED", "A customer message arrives"),
    ("CUSTOMER_ASSIGNED", "A customer is assigned"),
    ("FORM_SUBMISSION", "A form is submitted"),
    ("SETTING_CHANGED", "A setting changes"),
];

/// The kinds of receiver, as the API names them, with their labels.
pub const RECEIVER_TYPES: [(&str, &str); 3] = [("EMAIL", "E-mail"), ("USER", "User"), ("WEBHOOK", "Webhook URL")];

/// One receiver: its kind (`EMAIL`, `USER`, `WEBHOOK`) and value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiverView {
    /// `EMAIL`, `USER` or `WEBHOOK`.
    pub kind: String,
    /// An e-mail address, a user id or a URL.
    pub value: String,
}

/// A watchdog as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WatchdogView {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// What it watches, e.g. `JAVASCRIPT_ERROR`.
    pub watchdog_type: String,
    /// Where alerts go.
    pub receivers: Vec<ReceiverView>,
}

/// What `kind` watches, in words.
pub fn watchdog_type_label(kind: &str) -> &str {
    WATCHDOG_TYPES
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(kind, |(_, label)| label)
}

#[cfg(feature = "ssr")]
mod server {
    use rapport_core::{
        config::watchdogs::{ReceiverType, Watchdog, WatchdogReceiver, WatchdogType},
        error::CoreError,
    };
    use serde::de::DeserializeOwned;

    use super::{ReceiverView, WatchdogView};

    /// An API enum name as a string (`JAVASCRIPT_ERROR`).
    fn name_of<T: serde::Serialize>(value: &T) -> String {
        serde_json::to_value(value)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// An API enum from its name, or a field problem.
    fn parse<T: DeserializeOwned>(
        field: &str,
        value: &str,
        problems: &mut Vec<rapport_core::error::FieldError>,
    ) -> Option<T> {
        match serde_json::from_value(serde_json::Value::String(value.to_string())) {
            Ok(v) => Some(v),
            Err(_) => {
                problems.push(rapport_core::error::FieldError::new(
                    field,
                    "invalid_enum",
                    format!("{value:?} is not one of the offered choices"),
                ));
                None
            }
        }
    }

    pub(super) fn view(w: Watchdog) -> WatchdogView {
        WatchdogView {
            id: w.meta.id.unwrap_or_default(),
            name: w.name.unwrap_or_default(),
            watchdog_type: w.watchdog_type.as_ref().map(name_of).unwrap_or_default(),
            receivers: w
                .receivers
                .iter()
                .map(|r| ReceiverView {
                    kind: name_of(&r.kind),
                    value: r.value.clone(),
                })
                .collect(),
        }
    }

    /// The watchdog the form describes, and the form row of each receiver kept.
    pub(super) fn input(
        id: Option<String>,
        name: String,
        watchdog_type: String,
        types: Vec<String>,
        values: Vec<String>,
    ) -> Result<(Watchdog, Vec<usize>), CoreError> {
        let mut problems = Vec::new();
        let kind = if watchdog_type.is_empty() {
            None
        } else {
            parse::<WatchdogType>("watchdogType", &watchdog_type, &mut problems)
        };
        let mut receivers = Vec::new();
        let mut rows = Vec::new();
        for (row, value) in values.iter().enumerate() {
            let value = value.trim();
            if value.is_empty() {
                continue;
            }
            let kind = types.get(row).map(String::as_str).unwrap_or("EMAIL");
            if let Some(kind) = parse::<ReceiverType>(&format!("receivers[{row}].type"), kind, &mut problems) {
                receivers.push(WatchdogReceiver {
                    kind,
                    value: value.to_string(),
                });
                rows.push(row);
            }
        }
        if !problems.is_empty() {
            return Err(CoreError::Validation(problems));
        }
        let watchdog = Watchdog {
            meta: rapport_core::config::Meta {
                id,
                ..Default::default()
            },
            name: Some(name.trim().to_string()),
            watchdog_type: kind,
            receivers,
        };
        Ok((watchdog, rows))
    }

    /// Renames `receivers[k]…` problems to the form row `rows[k]` they came from.
    pub(super) fn to_rows(err: CoreError, rows: &[usize]) -> CoreError {
        match err {
            CoreError::Validation(mut fields) => {
                for f in &mut fields {
                    f.field = rename_row(&f.field, rows);
                }
                CoreError::Validation(fields)
            }
            other => other,
        }
    }

    fn rename_row(field: &str, rows: &[usize]) -> String {
        let Some(rest) = field.strip_prefix("receivers[") else {
            return field.to_string();
        };
        let Some((index, tail)) = rest.split_once(']') else {
            return field.to_string();
        };
        match index.parse::<usize>().ok().and_then(|k| rows.get(k)) {
            Some(row) => format!("receivers[{row}]{tail}"),
            None => field.to_string(),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn problems_name_the_row_typed_in() {
            assert_eq!(rename_row("receivers[1].value", &[0, 3]), "receivers[3].value");
            assert_eq!(rename_row("receivers[0]", &[2]), "receivers[2]");
            assert_eq!(rename_row("name", &[2]), "name");
        }

        #[test]
        fn empty_rows_are_dropped_and_rows_remembered() {
            let (w, rows) = input(
                None,
                " Errors ".into(),
                "JAVASCRIPT_ERROR".into(),
                vec!["EMAIL".into(), "USER".into(), "WEBHOOK".into()],
                vec!["ops@example.com".into(), " ".into(), "https://example.com/h".into()],
            )
            .unwrap();
            assert_eq!(rows, vec![0, 2]);
            assert_eq!(w.name.as_deref(), Some("Errors"));
            assert_eq!(w.receivers.len(), 2);
            assert_eq!(w.receivers[1].kind, ReceiverType::Webhook);
        }

        #[test]
        fn unknown_choices_are_field_problems() {
            let Err(CoreError::Validation(fields)) =
                input(None, "x".into(), "NOPE".into(), vec!["FAX".into()], vec!["123".into()])
            else {
                panic!("expected a validation error");
            };
            let names: Vec<&str> = fields.iter().map(|f| f.field.as_str()).collect();
            assert_eq!(names, ["watchdogType", "receivers[0].type"]);
        }
    }
}

#[cfg(feature = "ssr")]
async fn admin() -> Result<(crate::ssr::DashboardContext, rapport_core::model::SessionUser), ServerFnError> {
    crate::ssr::require_role(rapport_core::model::Role::Admin).await
}

/// Every watchdog of the tenant, by name.
#[server(endpoint = "list_watchdogs")]
pub async fn list_watchdogs() -> Result<Vec<WatchdogView>, ServerFnError> {
    use rapport_core::config::watchdogs::Watchdog;
    let (ctx, user) = admin().await?;
    let mut all: Vec<WatchdogView> = ctx
        .services
        .config_all::<Watchdog>(&user.tenant_id)
        .await
        .map_err(crate::ssr::to_server_error)?
        .into_iter()
        .map(server::view)
        .collect();
    all.sort_by_key(|a| a.name.to_lowercase());
    Ok(all)
}

/// One watchdog.
#[server(endpoint = "get_watchdog")]
pub async fn get_watchdog(id: String) -> Result<WatchdogView, ServerFnError> {
    use rapport_core::config::watchdogs::Watchdog;
    let (ctx, user) = admin().await?;
    ctx.services
        .config_get::<Watchdog>(&user.tenant_id, &id)
        .await
        .map(server::view)
        .map_err(crate::ssr::to_server_error)
}

/// Saves the watchdog a form describes (a new one without `id`).
#[cfg(feature = "ssr")]
async fn save(
    id: Option<String>,
    name: String,
    watchdog_type: String,
    receiver_type: Option<Vec<String>>,
    receiver_value: Option<Vec<String>>,
) -> Result<WatchdogView, ServerFnError> {
    use rapport_core::config::watchdogs::Watchdog;
    let (ctx, user) = admin().await?;
    if let Some(id) = &id {
        // Overriding an unknown id would be a 404 from the service too; asking
        // first keeps another tenant's ids out of reach with the same answer.
        ctx.services
            .config_get::<Watchdog>(&user.tenant_id, id)
            .await
            .map_err(crate::ssr::to_server_error)?;
    }
    let (watchdog, rows) = server::input(
        id,
        name,
        watchdog_type,
        receiver_type.unwrap_or_default(),
        receiver_value.unwrap_or_default(),
    )
    .map_err(crate::ssr::to_server_error)?;
    ctx.services
        .save_watchdog(&user.tenant_id, watchdog, &crate::ssr::actor(&user))
        .await
        .map(server::view)
        .map_err(|e| crate::ssr::to_server_error(server::to_rows(e, &rows)))
}

/// Adds a watchdog; `receiver_type[]` and `receiver_value[]` are the receiver rows.
#[server(endpoint = "add_watchdog")]
pub async fn add_watchdog(
    name: String,
    watchdog_type: String,
    receiver_type: Option<Vec<String>>,
    receiver_value: Option<Vec<String>>,
) -> Result<WatchdogView, ServerFnError> {
    save(None, name, watchdog_type, receiver_type, receiver_value).await
}

/// Replaces a watchdog's name, kind and receivers (no row filled: no receivers).
#[server(endpoint = "edit_watchdog")]
pub async fn edit_watchdog(
    id: String,
    name: String,
    watchdog_type: String,
    receiver_type: Option<Vec<String>>,
    receiver_value: Option<Vec<String>>,
) -> Result<WatchdogView, ServerFnError> {
    save(Some(id), name, watchdog_type, receiver_type, receiver_value).await
}

/// Deletes a watchdog, then shows the list.
#[server(endpoint = "remove_watchdog")]
pub async fn remove_watchdog(id: String) -> Result<(), ServerFnError> {
    let (ctx, user) = admin().await?;
    ctx.services
        .delete_watchdog(&user.tenant_id, &id, &crate::ssr::actor(&user))
        .await
        .map_err(crate::ssr::to_server_error)?;
    leptos_axum::redirect(WATCHDOGS_PATH);
    Ok(())
}
