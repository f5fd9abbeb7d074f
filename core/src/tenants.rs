//! Tenants: create, list, get, update, delete. Managed by platform admins (and a
//! tenant's own admins for its workspace settings); callers check that before
//! calling.
//!
//! Besides its name, slug and zone a tenant holds the settings the engines read
//! ([`EngineSettings`]): the default language of system messages, the default
//! agent capacity, and the business hours SLA clocks run on.

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    config::opening_hours::OpeningHours,
    db::unique_violation,
    error::{CoreError, CoreResult},
    ids::TenantId,
    model::{Page, PageRequest, Tenant},
    reports::days::{next_midnight, reset_day_rollups},
    time::{from_ms, now_ms},
    validate::{slugify, Checks, Paging, MAX_CHATS_RANGE},
    with_db, with_tx, Services,
};

/// Input to create a tenant.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NewTenant {
    /// Display name (required, at most 200 characters).
    pub name: Option<String>,
    /// Unique handle; derived from the name when omitted.
    pub slug: Option<String>,
    /// IANA time zone; default `UTC`.
    pub timezone: Option<String>,
}

/// Input to update a tenant; omitted fields keep their value.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TenantUpdate {
    /// New display name (not blank, at most 200 characters).
    #[schema(min_length = 1, max_length = 200, pattern = r"\S")]
    pub name: Option<String>,
    /// New unique handle: 2–63 of `a-z`, `0-9` and `-`, not starting with `-`.
    #[schema(
        min_length = 2,
        max_length = 63,
        pattern = "^[a-z0-9][a-z0-9-]*$",
        example = "acme-support"
    )]
    pub slug: Option<String>,
    /// New IANA time zone.
    #[schema(example = "Europe/Berlin")]
    pub timezone: Option<String>,
    /// New default language: a BCP 47 tag such as `en` or `de-CH` (at most 35
    /// characters). System messages go out in it when none exists in the
    /// customer's language.
    #[schema(max_length = 35, example = "de")]
    pub language: Option<String>,
    /// New default agent capacity: how many open conversations an agent without a
    /// capacity of their own (`maxConcurrentChats`) holds at once, 1–100.
    #[schema(minimum = 1, maximum = 100, example = 5)]
    pub max_chats: Option<i64>,
    /// The id of the tenant's opening hours that SLA clocks run on; `null` makes
    /// the clocks run around the clock; omitted keeps the current value.
    #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>)]
    pub business_hours_id: Option<Option<String>>,
    /// Whether the chat asks visitors to rate a closed conversation (CSAT).
    pub csat_enabled: Option<bool>,
    /// Whether agents see a visitor's draft as it is typed.
    pub typing_preview: Option<bool>,
    /// Whether a closed conversation's transcript is mailed to the customer.
    pub transcript_on_close: Option<bool>,
    /// After how many minutes an unseen reply goes by mail, 0–1440 (0: never).
    #[schema(minimum = 0, maximum = 1440, example = 5)]
    pub reply_by_mail_minutes: Option<i64>,
}

/// Reads a field that may be omitted (`None`), `null` (`Some(None)`) or a value:
/// for settings where `null` clears and omitted keeps. Use with `#[serde(default)]`.
pub fn present<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The tenant settings that routing, SLA clocks and system messages read
/// ([`Services::engine_settings`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSettings {
    /// Default language (BCP 47) of system messages, when the customer's language
    /// has none; `en` unless changed.
    pub language: String,
    /// Default agent capacity (open conversations at once), 1–100; 5 unless changed.
    pub max_chats: i64,
    /// Opening hours SLA clocks run on; `None`: around the clock.
    pub business_hours_id: Option<String>,
    /// The tenant's IANA time zone.
    pub timezone: String,
}

/// The default language of a tenant that never set one.
pub const DEFAULT_LANGUAGE: &str = "en";
/// After how many minutes an unseen reply goes by mail, unless the tenant
/// says otherwise.
pub const DEFAULT_REPLY_BY_MAIL_MINUTES: i64 = 5;
/// The default agent capacity of a tenant that never set one.
pub const DEFAULT_MAX_CHATS: i64 = 5;

#[derive(sqlx::FromRow)]
struct TenantRow {
    id: TenantId,
    name: String,
    slug: String,
    timezone: String,
    created_at: i64,
    language: String,
    max_chats: i64,
    business_hours_id: Option<String>,
    csat_enabled: bool,
    typing_preview: bool,
    transcript_on_close: bool,
    reply_by_mail_minutes: i64,
}

impl From<TenantRow> for Tenant {
    fn from(r: TenantRow) -> Self {
        Tenant {
            id: r.id,
            name: r.name,
            slug: r.slug,
            timezone: r.timezone,
            created_at: from_ms(r.created_at),
            language: r.language,
            max_chats: r.max_chats,
            business_hours_id: r.business_hours_id,
            csat_enabled: r.csat_enabled,
            typing_preview: r.typing_preview,
            transcript_on_close: r.transcript_on_close,
            reply_by_mail_minutes: r.reply_by_mail_minutes,
        }
    }
}

const COLUMNS: &str = "id, name, slug, timezone, created_at, language, max_chats, business_hours_id, csat_enabled, \
                       typing_preview, transcript_on_close, reply_by_mail_minutes";

/// A BCP 47 tag, normalised (`de-ch` → `de-CH`), or a field error.
pub(crate) fn language_tag(checks: &mut Checks, field: &str, value: &str) -> String {
    let value = checks.required_text(field, Some(value), 35);
    if value.is_empty() {
        return value;
    }
    match language_tags::LanguageTag::parse(&value) {
        Ok(tag) if tag.is_valid() => tag.to_string(),
        _ => {
            checks.push(
                field,
                "invalid_language",
                format!("{field} must be a BCP 47 tag such as en or de-CH"),
            );
            value
        }
    }
}

fn slug_conflict(err: sqlx::Error) -> CoreError {
    if unique_violation(&err, "tenants_slug_key", "tenants.slug") {
        CoreError::Conflict {
            field: Some("slug".into()),
            code: "slug_taken",
            message: "a tenant with this slug already exists".into(),
        }
    } else {
        err.into()
    }
}

/// The slug of a tenant created without one: its name's, or, when the name has too
/// few letters and digits for a slug (2 at least), `tenant` followed by them, so that
/// any valid name gives a valid slug.
fn derived_slug(name: &str) -> String {
    let slug = slugify(name);
    match slug.len() {
        0 => "tenant".to_string(),
        1 => format!("tenant-{slug}"),
        _ => slug,
    }
}

impl Services {
    /// Creates a tenant.
    pub async fn create_tenant(&self, input: NewTenant, actor: &Actor) -> CoreResult<Tenant> {
        let mut checks = Checks::new();
        let name = checks.required_text("name", input.name.as_deref(), 200);
        let slug = match input.slug.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            Some(s) => s.to_string(),
            None => derived_slug(&name),
        };
        if !name.is_empty() {
            checks.slug("slug", &slug);
        }
        let timezone = input.timezone.unwrap_or_else(|| "UTC".into());
        checks.timezone("timezone", &timezone);
        checks.finish()?;

        let tenant = Tenant {
            id: TenantId::new(uuid::Uuid::now_v7().to_string()),
            name,
            slug,
            timezone,
            created_at: from_ms(now_ms()),
            language: DEFAULT_LANGUAGE.to_string(),
            max_chats: DEFAULT_MAX_CHATS,
            business_hours_id: None,
            csat_enabled: true,
            typing_preview: true,
            transcript_on_close: false,
            reply_by_mail_minutes: DEFAULT_REPLY_BY_MAIL_MINUTES,
        };
        let created = tenant.created_at.timestamp_millis();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into tenants (id, name, slug, timezone, created_at, widget_key) values ($1, $2, $3, $4, $5, $6)"
        )
        .bind(&tenant.id)
        .bind(&tenant.name)
        .bind(&tenant.slug)
        .bind(&tenant.timezone)
        .bind(created)
        .bind(crate::conversations::new_widget_key())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(slug_conflict)?;
        let zone: chrono_tz::Tz = tenant.timezone.parse().unwrap_or(chrono_tz::UTC);
        reset_day_rollups(&mut tx, &tenant.id, zone, 0).await?;
        audit::record(
            &mut tx,
            Some(&tenant.id),
            actor,
            "tenant.create",
            "tenant",
            Some(&tenant.id),
        )
        .await?;
        tx.commit().await?;
        Ok(tenant)
    }

    /// One tenant by id.
    pub async fn get_tenant(&self, id: &TenantId) -> CoreResult<Tenant> {
        let sql = format!("select {COLUMNS} from tenants where id = $1");
        let row: Option<TenantRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.map(Tenant::from).ok_or(CoreError::NotFound("tenant"))
    }

    /// One tenant by id or slug.
    pub async fn find_tenant(&self, id_or_slug: &str) -> CoreResult<Tenant> {
        let sql = format!("select {COLUMNS} from tenants where id = $1 or slug = $1");
        let row: Option<TenantRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(id_or_slug)
            .fetch_optional(pool)
            .await)?;
        row.map(Tenant::from).ok_or(CoreError::NotFound("tenant"))
    }

    /// A page of tenants, oldest first.
    pub async fn list_tenants(&self, page: &PageRequest) -> CoreResult<Page<Tenant>> {
        let paging = Paging::from_request(page)?;
        let sql = format!("select {COLUMNS} from tenants order by created_at, id limit $1 offset $2");
        let (total, rows): (i64, Vec<TenantRow>) =
            crate::db::page(self.db(), "select count(*) from tenants", &sql, &[], &paging).await?;
        Ok(paging.page(total, rows.into_iter().map(Tenant::from).collect()))
    }

    /// Updates a tenant's name, slug, time zone or engine settings; omitted fields
    /// keep their value. `businessHoursId` must name opening hours of the tenant.
    pub async fn update_tenant(&self, id: &TenantId, input: TenantUpdate, actor: &Actor) -> CoreResult<Tenant> {
        let current = self.get_tenant(id).await?;
        let mut checks = Checks::new();
        let name = match input.name.as_deref() {
            Some(n) => checks.required_text("name", Some(n), 200),
            None => current.name,
        };
        let slug = input.slug.map(|s| s.trim().to_string()).unwrap_or(current.slug);
        checks.slug("slug", &slug);
        let timezone = input.timezone.unwrap_or_else(|| current.timezone.clone());
        checks.timezone("timezone", &timezone);
        let language = match input.language.as_deref() {
            Some(l) => language_tag(&mut checks, "language", l),
            None => current.language,
        };
        let max_chats = input.max_chats.unwrap_or(current.max_chats);
        checks.in_range("maxChats", max_chats, MAX_CHATS_RANGE);
        let business_hours_id = match input.business_hours_id {
            Some(given) => given.map(|h| h.trim().to_string()).filter(|h| !h.is_empty()),
            None => current.business_hours_id,
        };
        if let Some(hours) = business_hours_id.as_deref() {
            if !self.config_exists::<OpeningHours>(id, hours).await? {
                checks.unknown_reference("businessHoursId", "opening hours", hours);
            }
        }
        let csat_enabled = input.csat_enabled.unwrap_or(current.csat_enabled);
        let typing_preview = input.typing_preview.unwrap_or(current.typing_preview);
        let transcript_on_close = input.transcript_on_close.unwrap_or(current.transcript_on_close);
        let reply_by_mail_minutes = input.reply_by_mail_minutes.unwrap_or(current.reply_by_mail_minutes);
        checks.in_range("replyByMailMinutes", reply_by_mail_minutes, 0..=1440);
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update tenants set name = $2, slug = $3, timezone = $4, language = $5, max_chats = $6, \
             business_hours_id = $7, csat_enabled = $8, typing_preview = $9, \
             transcript_on_close = $10, reply_by_mail_minutes = $11 where id = $1"
        )
        .bind(id)
        .bind(&name)
        .bind(&slug)
        .bind(&timezone)
        .bind(&language)
        .bind(max_chats)
        .bind(&business_hours_id)
        .bind(csat_enabled)
        .bind(typing_preview)
        .bind(transcript_on_close)
        .bind(reply_by_mail_minutes)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(slug_conflict)?;
        if timezone != current.timezone {
            // Day rollups are kept in the tenant's zone: start them afresh.
            let zone: chrono_tz::Tz = timezone.parse().unwrap_or(chrono_tz::UTC);
            reset_day_rollups(&mut tx, id, zone, next_midnight(zone, now_ms())).await?;
        }
        audit::record(&mut tx, Some(id), actor, "tenant.update", "tenant", Some(id)).await?;
        tx.commit().await?;
        // Reports would find the change themselves; this spares the next one a retry.
        self.zone_states().forget(id);
        self.get_tenant(id).await
    }

    /// Deletes a tenant and everything it owns. Refused (409) when it holds the
    /// installation's last platform admin, who would otherwise be locked out.
    pub async fn delete_tenant(&self, id: &TenantId, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let (exists, admins_here, admins_total): (i64, i64, i64) = with_tx!(&mut tx, |conn| {
            let exists: i64 = sqlx::query_scalar("select count(*) from tenants where id = $1")
                .bind(id)
                .fetch_one(&mut *conn)
                .await?;
            let here: i64 = sqlx::query_scalar("select count(*) from users where tenant_id = $1 and platform_admin")
                .bind(id)
                .fetch_one(&mut *conn)
                .await?;
            let total: i64 = sqlx::query_scalar("select count(*) from users where platform_admin")
                .fetch_one(&mut *conn)
                .await?;
            Ok::<_, sqlx::Error>((exists, here, total))
        })?;
        if exists == 0 {
            return Err(CoreError::NotFound("tenant"));
        }
        if admins_here > 0 && admins_here == admins_total {
            return Err(CoreError::Conflict {
                field: None,
                code: "last_platform_admin",
                message: "this tenant holds the last platform admin; create another platform admin elsewhere first"
                    .into(),
            });
        }
        with_tx!(&mut tx, |conn| sqlx::query("delete from tenants where id = $1")
            .bind(id)
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        // The tenant's own log goes with it; the deletion is kept at installation level.
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from audit_log where tenant_id = $1"
        )
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        audit::record(&mut tx, None, actor, "tenant.delete", "tenant", Some(id)).await?;
        tx.commit().await?;
        self.keys_changed();
        Ok(())
    }

    /// The settings the engines read: default language and capacity, business
    /// hours and zone. A tenant that never set them gets `en`, 5 and `None`.
    pub async fn engine_settings(&self, tenant_id: &TenantId) -> CoreResult<EngineSettings> {
        let tenant = self.get_tenant(tenant_id).await?;
        Ok(EngineSettings {
            language: tenant.language,
            max_chats: tenant.max_chats,
            business_hours_id: tenant.business_hours_id,
            timezone: tenant.timezone,
        })
    }

    /// Number of tenants (used by first-start bootstrap).
    pub async fn count_tenants(&self) -> CoreResult<i64> {
        Ok(with_db!(self.db(), |pool| sqlx::query_scalar(
            "select count(*) from tenants"
        )
        .fetch_one(pool)
        .await)?)
    }
}

impl Services {
    /// Creates a tenant and, when `admin_email` is given, its first admin (role
    /// `ADMIN`). The admin's input is checked before anything is written, and the
    /// tenant is removed again if the admin cannot be created, so nothing is left
    /// half-made.
    pub async fn create_tenant_with_admin(
        &self,
        input: NewTenant,
        admin_email: Option<&str>,
        admin_password: Option<&str>,
        actor: &Actor,
    ) -> CoreResult<(Tenant, Option<crate::users::CreatedUser>)> {
        if let Some(email) = admin_email {
            let mut checks = Checks::new();
            checks.email("adminEmail", Some(email));
            if let Some(p) = admin_password {
                checks.password("adminPassword", p);
            }
            checks.finish()?;
        }
        let tenant = self.create_tenant(input, actor).await?;
        let Some(email) = admin_email else {
            return Ok((tenant, None));
        };
        let created = self
            .create_user(
                crate::users::NewUser {
                    tenant_id: tenant.id.clone(),
                    email: email.to_string(),
                    password: admin_password.map(str::to_string),
                    role: crate::model::Role::Admin,
                    display_name: None,
                    platform_admin: false,
                },
                actor,
            )
            .await;
        match created {
            Ok(user) => Ok((tenant, Some(user))),
            Err(err) => {
                self.delete_tenant(&tenant.id, actor).await?;
                Err(err)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::derived_slug;
    use crate::validate::Checks;

    #[test]
    fn every_name_derives_a_valid_slug() {
        assert_eq!(derived_slug("ACME Support"), "acme-support");
        assert_eq!(derived_slug("a"), "tenant-a");
        assert_eq!(derived_slug("!!!"), "tenant");
        for name in ["a", "!!!", "Ö", "x y", "ACME"] {
            let mut checks = Checks::new();
            checks.slug("slug", &derived_slug(name));
            assert!(checks.is_clean(), "{name}");
        }
    }
}
