//! A user's input, checked: what [`super::UserIn`] may hold, and the
//! conflicts its unique fields answer with.

use super::UserIn;
use crate::{
    db::unique_violation,
    error::{CoreError, CoreResult},
    model::Role,
    validate::{Checks, MAX_CHATS_RANGE, MAX_TAGS},
};

/// A checked [`UserIn`].
pub(super) struct ValidUser {
    pub(super) email: String,
    pub(super) external_id: Option<String>,
    pub(super) display_name: Option<String>,
    pub(super) description: Option<String>,
    pub(super) role: Role,
    pub(super) password: Option<String>,
    pub(super) tags: Vec<String>,
    pub(super) mco_enabled: bool,
    pub(super) max_chats: Option<i64>,
}

pub(super) fn validate_user(input: &UserIn) -> CoreResult<ValidUser> {
    let mut checks = Checks::new();
    let email = checks.email("email", input.email.as_deref());
    let external_id = checks.optional_text("externalId", input.external_id.as_deref(), 200);
    let display_name = checks.optional_text("displayName", input.display_name.as_deref(), 200);
    let description = checks.optional_text("description", input.description.as_deref(), 2000);
    let role = match (input.role_id.as_deref(), input.admin) {
        (Some(r), admin) => match Role::parse(r) {
            Some(role) => {
                if admin.is_some_and(|a| a != (role == Role::Admin)) {
                    checks.push(
                        "admin",
                        "conflicting_value",
                        "admin must be true exactly when roleId is ADMIN",
                    );
                }
                role
            }
            None => {
                checks.push(
                    "roleId",
                    "invalid_enum",
                    "roleId must be one of ADMIN, SUPERVISOR, AGENT",
                );
                Role::Agent
            }
        },
        (None, Some(true)) => Role::Admin,
        (None, _) => Role::Agent,
    };
    if let Some(p) = input.password.as_deref() {
        checks.password("password", p);
    }
    let tags = input.tags.clone().unwrap_or_default();
    checks.tags("tags", &tags, MAX_TAGS);
    if let Some(n) = input.max_concurrent_chats {
        checks.in_range("maxConcurrentChats", n, MAX_CHATS_RANGE);
    }
    checks.finish()?;
    Ok(ValidUser {
        email,
        external_id,
        display_name,
        description,
        role,
        password: input.password.clone(),
        tags,
        mco_enabled: input.mco_enabled.unwrap_or(false),
        max_chats: input.max_concurrent_chats,
    })
}

pub(super) fn user_conflict(err: sqlx::Error) -> CoreError {
    if unique_violation(&err, "users_tenant_email_key", "users.tenant_id, users.email") {
        CoreError::Conflict {
            field: Some("email".into()),
            code: "email_taken",
            message: "a user with this e-mail already exists in the tenant".into(),
        }
    } else if unique_violation(
        &err,
        "users_tenant_external_id_key",
        "users.tenant_id, users.external_id",
    ) {
        CoreError::Conflict {
            field: Some("externalId".into()),
            code: "external_id_taken",
            message: "a user with this externalId already exists in the tenant".into(),
        }
    } else {
        err.into()
    }
}
