//! The checks a customer's fields pass before a create or update stores
//! them: each field, the assignment's user or team, and a taken `externalId`.

use super::{write_tags, CustomerIn, Gender, MAX_CUSTOMER_TAGS};
use crate::{
    db::unique_violation,
    error::{CoreError, CoreResult},
    ids::{TeamId, TenantId},
    validate::{is_email, Checks},
    Services,
};

pub(crate) struct ValidCustomer {
    pub(super) email: Option<String>,
    pub(super) first_name: Option<String>,
    pub(super) last_name: Option<String>,
    pub(super) gender: Option<Gender>,
    pub(super) external_id: Option<String>,
    pub(super) user: Option<String>,
    pub(super) team: Option<String>,
    /// The stored JSON of the new tags; `None` keeps the customer's.
    pub(super) tags: Option<String>,
    /// `None` keeps the customer's language; `Some(None)` removes it.
    pub(super) language: Option<Option<String>>,
}

/// A customer's language, as given: omitted keeps (`None`), blank removes
/// (`Some(None)`), else a BCP 47 tag.
pub(super) fn check_language(checks: &mut Checks, field: &str, value: Option<&str>) -> Option<Option<String>> {
    let value = value?;
    match checks.optional_text(field, Some(value), 35) {
        None => Some(None),
        Some(language) => Some(checks.language(field, &language)),
    }
}

pub(super) fn conflict(err: sqlx::Error) -> CoreError {
    if unique_violation(
        &err,
        "customers_tenant_external_id_key",
        "customers.tenant_id, customers.external_id",
    ) {
        CoreError::Conflict {
            field: Some("externalId".into()),
            code: "external_id_taken",
            message: "a customer with this externalId already exists".into(),
        }
    } else {
        err.into()
    }
}

impl Services {
    /// Checks a customer's fields as a create or update would (422 naming each
    /// field), without writing.
    pub(crate) async fn validate_customer(
        &self,
        tenant_id: &TenantId,
        input: &CustomerIn,
    ) -> CoreResult<ValidCustomer> {
        let mut checks = Checks::new();
        let email = checks
            .optional_text("email", input.email.as_deref(), 254)
            .map(|e| e.to_lowercase());
        if email.as_deref().is_some_and(|e| !is_email(e)) {
            checks.push("email", "invalid_email", "email must be an e-mail address");
        }
        let first_name = checks.optional_text("firstName", input.first_name.as_deref(), 200);
        let last_name = checks.optional_text("lastName", input.last_name.as_deref(), 200);
        let external_id = checks.optional_text("externalId", input.external_id.as_deref(), 200);
        let tags = input.tags.as_ref().map(|tags| {
            let tags: Vec<String> = tags.iter().map(|t| t.trim().to_string()).collect();
            checks.tags("tags", &tags, MAX_CUSTOMER_TAGS);
            write_tags(&tags)
        });
        let language = check_language(&mut checks, "language", input.language.as_deref());
        let (user, team) = self
            .resolve_assignment(
                tenant_id,
                &mut checks,
                ("assignedUser", input.assigned_user.as_deref()),
                ("assignedTeam", input.assigned_team.as_deref()),
            )
            .await?;
        checks.finish()?;
        Ok(ValidCustomer {
            email,
            first_name,
            last_name,
            gender: input.gender,
            external_id,
            user,
            team,
            tags,
            language,
        })
    }

    pub(crate) async fn resolve_assignment(
        &self,
        tenant_id: &TenantId,
        checks: &mut Checks,
        (user_field, user): (&str, Option<&str>),
        (team_field, team): (&str, Option<&str>),
    ) -> CoreResult<(Option<String>, Option<String>)> {
        let user = user.map(str::trim).filter(|s| !s.is_empty());
        let team = team.map(str::trim).filter(|s| !s.is_empty());
        if user.is_some() && team.is_some() {
            checks.push(
                team_field,
                "mutually_exclusive",
                format!("assign to a user or a team, not both ({user_field} is set)"),
            );
            return Ok((None, None));
        }
        let user = match user {
            Some(u) => checks
                .reference(user_field, "user", u, self.find_user(tenant_id, u).await)?
                .map(|found| found.id.into_string()),
            None => None,
        };
        let team = match team {
            Some(t) => checks
                .reference(team_field, "team", t, self.get_team(tenant_id, &TeamId::from(t)).await)?
                .map(|found| found.id.into_string()),
            None => None,
        };
        Ok((user, team))
    }
}
