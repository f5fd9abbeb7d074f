//! First start: an empty database gets a default tenant and an admin who can log in.

use crate::{
    audit::Actor,
    error::{CoreError, CoreResult},
    model::Role,
    tenants::NewTenant,
    users::NewUser,
    Services,
};

/// Default e-mail of the bootstrap admin when `RAPPORT_ADMIN_EMAIL` is unset.
pub const DEFAULT_ADMIN_EMAIL: &str = "admin@rapport.local";

/// What the first start created, so the caller can tell the operator once.
#[derive(Debug, Clone)]
pub struct Bootstrapped {
    /// The default tenant's slug.
    pub tenant_slug: String,
    /// The admin's e-mail.
    pub admin_email: String,
    /// The generated password, when none was configured. Print it once, never log it.
    pub generated_password: Option<String>,
}

impl Services {
    /// On an empty database, creates the `default` tenant and an admin (role
    /// `ADMIN`, platform admin) with the given or a generated password. Does nothing
    /// when any tenant exists. Safe to race: a second instance that loses the race on
    /// the tenant slug does nothing.
    pub async fn bootstrap(
        &self,
        admin_email: Option<&str>,
        admin_password: Option<&str>,
    ) -> CoreResult<Option<Bootstrapped>> {
        if self.count_tenants().await? > 0 {
            return Ok(None);
        }
        let actor = Actor::system("bootstrap");
        let default = NewTenant {
            name: Some("Default".into()),
            slug: Some("default".into()),
            timezone: None,
        };
        let tenant = match self.create_tenant(default, &actor).await {
            Ok(t) => t,
            Err(CoreError::Conflict { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let created = self
            .create_user(
                NewUser {
                    tenant_id: tenant.id,
                    email: admin_email.unwrap_or(DEFAULT_ADMIN_EMAIL).to_string(),
                    password: admin_password.map(str::to_string),
                    role: Role::Admin,
                    display_name: Some("Administrator".into()),
                    platform_admin: true,
                },
                &actor,
            )
            .await?;
        Ok(Some(Bootstrapped {
            tenant_slug: tenant.slug,
            admin_email: created.email,
            generated_password: created.generated_password,
        }))
    }
}
