//! The audit log viewer (supervisors and admins): `GET /rest/v1/audit` with the
//! actor's e-mail where the actor is a user.

use leptos::prelude::*;
use rapport_core::model::PageInfo;
use serde::{Deserialize, Serialize};

/// Where the audit log is read.
pub const AUDIT_PATH: &str = "/settings/audit";

/// Entries per page.
pub const AUDIT_PER_PAGE: i64 = 50;

/// One entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditView {
    /// When, RFC 3339.
    pub at: String,
    /// `user`, `apikey`, `platformkey`, `system` or `customer`.
    pub actor_type: String,
    /// The actor's id.
    pub actor_id: String,
    /// The user's e-mail, when the actor is a user of the workspace.
    pub actor_email: Option<String>,
    /// What was done, e.g. `user.create`.
    pub action: String,
    /// Kind of object.
    pub resource_type: String,
    /// The object's id.
    pub resource_id: Option<String>,
    /// Client IP.
    pub ip: Option<String>,
    /// Request id.
    pub request_id: Option<String>,
}

/// One page of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditPage {
    /// The entries, newest first.
    pub entries: Vec<AuditView>,
    /// Where the page sits.
    pub page: PageInfo,
}

/// The log's filters as the page's GET form sends them: dates are `YYYY-MM-DD`
/// (whole UTC days, both included); `action` may end in `.*`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct AuditQuery {
    /// First day.
    pub from: String,
    /// Last day.
    pub to: String,
    /// Actor id or a user's e-mail.
    pub actor: String,
    /// Action or `resource.*`.
    pub action: String,
    /// Page number from 0.
    pub page: i64,
}

/// A page of the workspace's audit log.
#[server(endpoint = "read_audit_log")]
pub async fn read_audit_log(#[server(default)] query: AuditQuery) -> Result<AuditPage, ServerFnError> {
    use crate::api::problem::{FieldProblem, Problem};
    let (ctx, user) = crate::ssr::require_role(rapport_core::model::Role::Supervisor).await?;
    let mut fields = Vec::new();
    let mut day = |name: &str, text: &str, next: bool| -> Option<chrono::DateTime<chrono::Utc>> {
        if text.trim().is_empty() {
            return None;
        }
        match chrono::NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d") {
            Ok(d) => {
                let d = if next { d.succ_opt().unwrap_or(d) } else { d };
                Some(d.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc())
            }
            Err(_) => {
                fields.push(FieldProblem {
                    field: name.to_string(),
                    message: format!("{name} must be a date, YYYY-MM-DD"),
                });
                None
            }
        }
    };
    let from = day("from", &query.from, false);
    let to = day("to", &query.to, true);
    if !fields.is_empty() {
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(axum::http::StatusCode::UNPROCESSABLE_ENTITY);
        }
        return Err(Problem {
            message: "Check the dates.".into(),
            fields,
        }
        .into_error());
    }
    // An e-mail names a user of the workspace; anything else is an id.
    let actor = match query.actor.trim() {
        "" => None,
        a if a.contains('@') => Some(
            ctx.services
                .find_user(&user.tenant_id, a)
                .await
                .map(|u| u.id.into_string())
                .unwrap_or_else(|_| a.to_string()),
        ),
        a => Some(a.to_string()),
    };
    let filter = rapport_core::audit::AuditFilter {
        from,
        to,
        actor,
        action: Some(query.action.trim().to_string()).filter(|a| !a.is_empty()),
    };
    let page = rapport_core::model::PageRequest {
        page_number: Some(query.page.max(0)),
        page_size: Some(AUDIT_PER_PAGE),
        ..Default::default()
    };
    let found = ctx
        .services
        .list_audit(&user.tenant_id, &filter, &page)
        .await
        .map_err(crate::ssr::to_server_error)?;
    let mut emails: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
    let mut entries = Vec::with_capacity(found.results.len());
    for e in found.results {
        let actor_type = serde_json::to_value(e.actor_type)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let actor_email = if actor_type.eq_ignore_ascii_case("user") {
            if !emails.contains_key(&e.actor_id) {
                let email = ctx
                    .services
                    .get_user(&user.tenant_id, &rapport_core::ids::UserId::from(e.actor_id.as_str()))
                    .await
                    .ok()
                    .map(|u| u.email);
                emails.insert(e.actor_id.clone(), email);
            }
            emails[&e.actor_id].clone()
        } else {
            None
        };
        entries.push(AuditView {
            at: e.at.to_rfc3339(),
            actor_type,
            actor_id: e.actor_id,
            actor_email,
            action: e.action,
            resource_type: e.resource_type,
            resource_id: e.resource_id,
            ip: e.ip,
            request_id: e.request_id,
        });
    }
    Ok(AuditPage {
        entries,
        page: found.page,
    })
}
