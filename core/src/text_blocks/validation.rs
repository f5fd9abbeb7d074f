//! The checks a text block passes before it is stored: its fields, that its
//! shortcut is free for its owner, and that its team or user is the tenant's.

use super::{fill::placeholders, Scope, TextBlockIn, MAX_TEXT, VARIABLES};
use crate::{
    db::{unique_violation, Tx},
    error::{CoreError, CoreResult},
    ids::TenantId,
    validate::Checks,
    with_tx,
};

/// A block's fields after validation.
pub(super) struct Valid {
    pub(super) shortcut: String,
    pub(super) language: Option<String>,
    pub(super) text: String,
    pub(super) scope: Scope,
    pub(super) team_id: Option<String>,
    pub(super) user_id: Option<String>,
}

pub(super) fn validate(input: &TextBlockIn) -> CoreResult<Valid> {
    let mut checks = Checks::new();
    let shortcut = checks.required_text("shortcut", input.shortcut.as_deref(), 40);
    if !shortcut.is_empty() {
        let mut chars = shortcut.chars();
        let first_ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        if !first_ok || !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-') {
            checks.push(
                "shortcut",
                "invalid_shortcut",
                "shortcut takes lowercase letters, digits, _ and -, starting with a letter or digit",
            );
        }
    }
    let language = match checks.optional_text("language", input.language.as_deref(), 35) {
        Some(language) => checks.language("language", &language),
        None => None,
    };
    let text = checks.required_text("text", input.text.as_deref(), MAX_TEXT);
    {
        for p in placeholders(&text) {
            if !VARIABLES.contains(&p.name) {
                checks.push(
                    "text",
                    "unknown_variable",
                    format!(
                        "{{{}}} is not a variable; the variables are {}",
                        p.name,
                        VARIABLES.map(|v| format!("{{{v}}}")).join(", ")
                    ),
                );
                break;
            }
        }
    }
    let scope = input.scope.unwrap_or_default();
    let mut owner = |field: &str, value: Option<&str>, wanted: bool| -> Option<String> {
        match (value.map(str::trim).filter(|v| !v.is_empty()), wanted) {
            (Some(v), true) => Some(v.to_string()),
            (None, true) => {
                checks.push(
                    field,
                    "required",
                    format!("a {} block names its {field}", scope.as_str()),
                );
                None
            }
            (Some(_), false) => {
                checks.push(
                    field,
                    "not_allowed",
                    format!("a {} block takes no {field}", scope.as_str()),
                );
                None
            }
            (None, false) => None,
        }
    };
    let team_id = owner("teamId", input.team_id.as_deref(), scope == Scope::Team);
    let user_id = owner("userId", input.user_id.as_deref(), scope == Scope::User);
    checks.finish()?;
    Ok(Valid {
        shortcut,
        language,
        text,
        scope,
        team_id,
        user_id,
    })
}

pub(super) fn taken(err: sqlx::Error) -> CoreError {
    if unique_violation(&err, "text_blocks_owner_shortcut_idx", "text_blocks_owner_shortcut_idx")
        || unique_violation(&err, "text_blocks_owner_shortcut_idx", "text_blocks.shortcut")
    {
        CoreError::Conflict {
            field: Some("shortcut".into()),
            code: "shortcut_taken",
            message: "this owner already has a block with this shortcut in this language".into(),
        }
    } else {
        err.into()
    }
}

/// Checks that a block's team or user is the tenant's (422 `unknown_reference`).
pub(super) async fn check_owner(tx: &mut Tx, tenant_id: &TenantId, valid: &Valid) -> CoreResult<()> {
    let (table, field, id) = match (&valid.team_id, &valid.user_id) {
        (Some(team), _) => ("teams", "teamId", team),
        (None, Some(user)) => ("users", "userId", user),
        (None, None) => return Ok(()),
    };
    let sql = format!("select count(*) from {table} where tenant_id = $1 and id = $2");
    let n: i64 = with_tx!(tx, |conn| sqlx::query_scalar(&sql)
        .bind(tenant_id)
        .bind(id)
        .fetch_one(conn)
        .await)?;
    if n == 0 {
        return Err(CoreError::invalid(
            field,
            "unknown_reference",
            format!("{field} names no {} of this workspace", &table[..table.len() - 1]),
        ));
    }
    Ok(())
}
