//! Customers (spec 2.1): the people who talk to a tenant. A customer may be assigned
//! to a user or to a team, never both.
//!
//! Our extensions, which routing rules read: `tags` (`HAS_TAG`), `language` (which
//! system message a rule sends) and `pageUrl` (the page the visitor is on, for the
//! `URL` condition; set by the widget, read-only here). On an override or update an
//! omitted `tags` or `language` keeps what the customer has, so that clients that
//! know only the spec's fields never wipe what the widget or agents set.

mod identity;
mod list;
mod tags;
mod visitor;

pub(crate) use identity::{add_visitor_token, keep_claims, move_visitor_token, Claims, NewVisitor};
pub use identity::{identity_signature, IdentitySettings, IdentitySettingsIn};
pub use list::CustomerFilter;
pub use tags::TagList;
pub(crate) use visitor::check_visitor_context;

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::{unique_violation, SumTable, TenantTable, Tx},
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{CustomerId, TeamId, TenantId, UserId},
    live::LiveEvent,
    time::{from_ms, now_ms},
    validate::{is_email, Checks},
    with_db, with_tx, Services,
};

/// Most tags on one customer.
pub const MAX_CUSTOMER_TAGS: usize = 50;

/// Gender, as the spec spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Gender {
    /// female
    Female,
    /// other
    Other,
    /// male
    Male,
    /// none
    None,
}

impl Gender {
    fn as_str(self) -> &'static str {
        match self {
            Gender::Female => "female",
            Gender::Other => "other",
            Gender::Male => "male",
            Gender::None => "none",
        }
    }

    fn parse(s: &str) -> Option<Gender> {
        [Gender::Female, Gender::Other, Gender::Male, Gender::None]
            .into_iter()
            .find(|g| g.as_str() == s)
    }
}

/// A customer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Customer {
    /// Unique id.
    #[schema(value_type = String)]
    pub id: CustomerId,
    /// E-mail address.
    pub email: Option<String>,
    /// First name.
    pub first_name: Option<String>,
    /// Last name.
    pub last_name: Option<String>,
    /// `female`, `other`, `male` or `none`.
    pub gender: Option<Gender>,
    /// The client's own id for this customer, unique in the tenant.
    pub external_id: Option<String>,
    /// Id of the user the customer is assigned to.
    pub assigned_user: Option<String>,
    /// Id of the team the customer is assigned to (exclusive with `assignedUser`).
    pub assigned_team: Option<String>,
    /// Tags, which routing and SLA rules match (`HAS_TAG`); our extension.
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub tags: Vec<String>,
    /// The customer's language, a BCP 47 tag (`de-CH`): routing rules send system
    /// messages in it. Our extension.
    pub language: Option<String>,
    /// The page the visitor was last on, as the widget reported it (`URL`
    /// routing conditions match it). Our extension; read-only here.
    pub page_url: Option<String>,
    /// Tags the visitor's page set (the visitor script's `tag`), kept apart
    /// from `tags` because any page can set them. `HAS_TAG` conditions say
    /// which they read. Our extension; read-only here.
    #[schema(value_type = Vec<crate::validate::Tag>, max_items = 50)]
    pub page_tags: Vec<String>,
    /// Whether the visitor's `externalId` and `email` were signed by the
    /// workspace's site (identity verification, `GET /widget/identity`). Our
    /// extension; read-only here.
    pub identity_verified: bool,
    /// An e-mail address the visitor gave without a valid signature: only a
    /// claim, never the customer's `email`. Our extension; read-only here.
    pub claimed_email: Option<String>,
    /// An external id the visitor gave without a valid signature: only a
    /// claim, which no message to that external id reaches. Our extension;
    /// read-only here.
    pub claimed_external_id: Option<String>,
    /// When the customer was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When the customer was last changed.
    pub updated_at: chrono::DateTime<chrono::Utc>,
}

/// Input to create, override or update a customer (spec 2.1).
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({"email": "eve@example.com", "firstName": "Eve", "lastName": "Ng", "gender": "female", "externalId": "crm-1042", "assignedUser": "agent@example.com"}))]
pub struct CustomerIn {
    /// Optional id of an existing customer to override (create/override); unknown ids are 404.
    pub id: Option<String>,
    /// E-mail address.
    #[schema(format = Email, max_length = 254)]
    pub email: Option<String>,
    /// First name (at most 200 characters).
    #[schema(max_length = 200)]
    pub first_name: Option<String>,
    /// Last name (at most 200 characters).
    #[schema(max_length = 200)]
    pub last_name: Option<String>,
    /// `female`, `other`, `male` or `none`.
    pub gender: Option<Gender>,
    /// The client's own id, unique in the tenant (at most 200 characters).
    #[schema(max_length = 200)]
    pub external_id: Option<String>,
    /// Id or e-mail of a user of this tenant to assign the customer to.
    pub assigned_user: Option<String>,
    /// Id of a team of this tenant to assign the customer to (not with `assignedUser`).
    pub assigned_team: Option<String>,
    /// Our extension: tags (unique, at most 50, each 1–64 characters). They replace
    /// the customer's tags; omitted, the customer keeps its tags; `[]` removes them.
    #[schema(value_type = Option<Vec<crate::validate::Tag>>, max_items = 50)]
    pub tags: Option<Vec<String>>,
    /// Our extension: a BCP 47 language tag (`en`, `de-CH`). Omitted, the customer
    /// keeps its language; an empty string removes it.
    #[schema(
        max_length = 35,
        pattern = r"^\s*$|^[A-Za-z]{2,3}(-[A-Za-z]{4})?(-([A-Za-z]{2}|[0-9]{3}))?(-([A-Za-z0-9]{5,8}|[0-9][A-Za-z0-9]{3}))*(-[0-9A-WY-Za-wy-z](-[A-Za-z0-9]{2,8})+)*(-[Xx](-[A-Za-z0-9]{1,8})+)?$",
        example = "de-CH"
    )]
    pub language: Option<String>,
}

impl CustomerIn {
    /// `assignedUser` and `assignedTeam` exclude each other, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{"not": {"required": ["assignedUser", "assignedTeam"]}}])
    }
}

/// Assignment of a customer: a user, a team, or (both omitted) nobody.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Assignment {
    /// Id or e-mail of a user of this tenant.
    #[schema(value_type = Option<String>)]
    pub user_id: Option<UserId>,
    /// Id of a team of this tenant (not with `userId`).
    pub team_id: Option<String>,
}

impl Assignment {
    /// `userId` and `teamId` exclude each other, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{"not": {"required": ["userId", "teamId"]}}])
    }
}

#[derive(sqlx::FromRow)]
struct CustomerRow {
    id: CustomerId,
    email: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    gender: Option<String>,
    external_id: Option<String>,
    assigned_user_id: Option<String>,
    assigned_team_id: Option<String>,
    tags: String,
    language: Option<String>,
    page_url: Option<String>,
    page_tags: String,
    identity_verified: bool,
    claimed_email: Option<String>,
    claimed_external_id: Option<String>,
    created_at: i64,
    updated_at: i64,
}

/// Tags as stored (a JSON array, as `users.tags`).
fn read_tags(stored: &str) -> Vec<String> {
    serde_json::from_str(stored).unwrap_or_default()
}

fn write_tags(tags: &[String]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".into())
}

impl From<CustomerRow> for Customer {
    fn from(r: CustomerRow) -> Self {
        Customer {
            id: r.id,
            email: r.email,
            first_name: r.first_name,
            last_name: r.last_name,
            gender: r.gender.as_deref().and_then(Gender::parse),
            external_id: r.external_id,
            assigned_user: r.assigned_user_id,
            assigned_team: r.assigned_team_id,
            tags: read_tags(&r.tags),
            language: r.language,
            page_url: r.page_url,
            page_tags: read_tags(&r.page_tags),
            identity_verified: r.identity_verified,
            claimed_email: r.claimed_email,
            claimed_external_id: r.claimed_external_id,
            created_at: from_ms(r.created_at),
            updated_at: from_ms(r.updated_at),
        }
    }
}

const COLUMNS: &str = "id, email, first_name, last_name, gender, external_id, assigned_user_id, assigned_team_id, \
     tags, language, page_url, page_tags, identity_verified, claimed_email, claimed_external_id, created_at, updated_at";

/// The customers table, as [`CustomerRow`] reads it.
const CUSTOMERS: TenantTable = TenantTable {
    table: "customers",
    columns: COLUMNS,
    what: "customer",
    narrow: "",
};

pub(crate) struct ValidCustomer {
    email: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    gender: Option<Gender>,
    external_id: Option<String>,
    user: Option<String>,
    team: Option<String>,
    /// The stored JSON of the new tags; `None` keeps the customer's.
    tags: Option<String>,
    /// `None` keeps the customer's language; `Some(None)` removes it.
    language: Option<Option<String>>,
}

/// A customer's language, as given: omitted keeps (`None`), blank removes
/// (`Some(None)`), else a BCP 47 tag.
fn check_language(checks: &mut Checks, field: &str, value: Option<&str>) -> Option<Option<String>> {
    let value = value?;
    match checks.optional_text(field, Some(value), 35) {
        None => Some(None),
        Some(language) => Some(checks.language(field, &language)),
    }
}

fn conflict(err: sqlx::Error) -> CoreError {
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
            Some(u) => match self.find_user(tenant_id, u).await {
                Ok(found) => Some(found.id.into_string()),
                Err(CoreError::NotFound(_)) => {
                    checks.push(user_field, "unknown_reference", format!("no user {u} in this tenant"));
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        let team = match team {
            Some(t) => match self.get_team(tenant_id, &TeamId::from(t)).await {
                Ok(found) => Some(found.id.into_string()),
                Err(CoreError::NotFound(_)) => {
                    checks.push(team_field, "unknown_reference", format!("no team {t} in this tenant"));
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        Ok((user, team))
    }

    /// Creates a customer, or, when `id` is given, overrides that customer (404 if unknown).
    /// A new customer fires `customer.created` and `conversation.created` (spec 6).
    pub async fn save_customer(&self, tenant_id: &TenantId, input: CustomerIn, actor: &Actor) -> CoreResult<Customer> {
        if let Some(id) = input.id.clone() {
            return self
                .update_customer(tenant_id, &CustomerId::from(id), input, actor)
                .await;
        }
        let id = CustomerId::new(uuid::Uuid::now_v7().to_string());
        self.create_customer_with_id(tenant_id, &id, input, None, actor).await
    }

    /// Creates customer `id`; `visitor` links it to a widget visitor (its
    /// token, page and what it claimed of itself, checked by the caller).
    pub(crate) async fn create_customer_with_id(
        &self,
        tenant_id: &TenantId,
        id: &CustomerId,
        input: CustomerIn,
        visitor: Option<NewVisitor<'_>>,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        let valid = self.validate_customer(tenant_id, &input).await?;
        let now = now_ms();
        let no_claims = Claims::default();
        let claims = visitor.as_ref().map_or(&no_claims, |v| v.claims);
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into customers (id, tenant_id, email, first_name, last_name, gender, external_id, \
             assigned_user_id, assigned_team_id, created_at, updated_at, status, status_changed_at, \
             tags, language, page_url, identity_verified, claimed_email, claimed_external_id) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, 'UNREAD', $10, $11, $12, $13, $14, $15, $16)"
        )
        .bind(id)
        .bind(tenant_id)
        .bind(&valid.email)
        .bind(&valid.first_name)
        .bind(&valid.last_name)
        .bind(valid.gender.map(Gender::as_str))
        .bind(&valid.external_id)
        .bind(&valid.user)
        .bind(&valid.team)
        .bind(now)
        .bind(valid.tags.as_deref().unwrap_or("[]"))
        .bind(valid.language.clone().flatten())
        .bind(visitor.as_ref().and_then(|v| v.page_url))
        .bind(claims.verified)
        .bind(claims.unverified_email())
        .bind(claims.unverified_external_id())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(conflict)?;
        if let Some(visitor) = &visitor {
            identity::add_visitor_token(&mut tx, tenant_id, id, visitor.token_hash).await?;
        }
        audit::record(&mut tx, Some(tenant_id), actor, "customer.create", "customer", Some(id)).await?;
        let customer = customer_in(&mut tx, tenant_id, id).await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::CustomerCreated,
            Some(id),
            &customer,
        )
        .await?;
        let conversation = self.conversation_in(&mut tx, tenant_id, id).await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::ConversationCreated,
            Some(id),
            &conversation,
        )
        .await?;
        crate::reports::facts::conversation_started(&mut tx, tenant_id, id, actor.user_id()).await?;
        count_customers(&mut tx, tenant_id, 1);
        self.commit_live(tx, tenant_id, id, LiveEvent::Conversation).await?;
        Ok(customer)
    }

    /// Replaces a customer's fields; an omitted `tags` or `language` is kept.
    pub async fn update_customer(
        &self,
        tenant_id: &TenantId,
        id: &CustomerId,
        input: CustomerIn,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        self.get_customer(tenant_id, id).await?;
        let valid = self.validate_customer(tenant_id, &input).await?;
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "update customers set email = $3, first_name = $4, last_name = $5, gender = $6, external_id = $7, \
             assigned_user_id = $8, assigned_team_id = $9, updated_at = $10, tags = coalesce($11, tags), \
             language = case when $12 then $13 else language end where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .bind(&valid.email)
        .bind(&valid.first_name)
        .bind(&valid.last_name)
        .bind(valid.gender.map(Gender::as_str))
        .bind(&valid.external_id)
        .bind(&valid.user)
        .bind(&valid.team)
        .bind(now_ms())
        .bind(&valid.tags)
        .bind(valid.language.is_some())
        .bind(valid.language.clone().flatten())
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(conflict)?;
        audit::record(&mut tx, Some(tenant_id), actor, "customer.update", "customer", Some(id)).await?;
        let customer = customer_in(&mut tx, tenant_id, id).await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::CustomerUpdated,
            Some(id),
            &customer,
        )
        .await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(customer)
    }

    /// One customer of the tenant.
    pub async fn get_customer(&self, tenant_id: &TenantId, id: &CustomerId) -> CoreResult<Customer> {
        CUSTOMERS
            .get::<CustomerRow>(self.db(), tenant_id, id)
            .await
            .map(Customer::from)
    }

    /// A customer of the tenant by external id.
    pub async fn find_customer_by_external_id(&self, tenant_id: &TenantId, external_id: &str) -> CoreResult<Customer> {
        let sql = format!("select {COLUMNS} from customers where tenant_id = $1 and external_id = $2");
        let row: Option<CustomerRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(external_id)
            .fetch_optional(pool)
            .await)?;
        row.map(Customer::from).ok_or(CoreError::NotFound("customer"))
    }

    /// Deletes a customer row and what cascades from it, nothing else: for a
    /// customer merged into another (`hand_visitor_over`), whose data has moved.
    /// Deleting a customer as a person asks is [`Services::erase_customer`].
    pub async fn delete_customer(&self, tenant_id: &TenantId, id: &CustomerId, actor: &Actor) -> CoreResult<()> {
        let mut tx = self.db().begin().await?;
        let customer = customer_in(&mut tx, tenant_id, id).await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "delete from customers where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        count_customers(&mut tx, tenant_id, -1);
        audit::record(&mut tx, Some(tenant_id), actor, "customer.delete", "customer", Some(id)).await?;
        let erased = CustomerErased {
            id: customer.id.to_string(),
            external_id: customer.external_id.clone(),
        };
        events::enqueue(&mut tx, tenant_id, actor, EventType::CustomerDeleted, Some(id), &erased).await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(())
    }
}

/// The body of `customer.deleted`: whom integrators should forget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CustomerErased {
    /// The customer's id.
    pub id: String,
    /// The id the customer had in the integrator's system, if any.
    pub external_id: Option<String>,
}

/// Assigns a customer to `user` or `team` (or neither) in `tx`: audited, and
/// `customer.assigned` queued. What an assignment makes happen (the watchdogs,
/// the queue) is `engine::dispatch::assign`'s; the caller publishes
/// `LiveEvent::Assigned` after the commit.
pub(crate) async fn assign_in(
    tx: &mut Tx,
    tenant_id: &TenantId,
    id: &CustomerId,
    user: Option<&str>,
    team: Option<&str>,
    actor: &Actor,
) -> CoreResult<Customer> {
    with_tx!(tx, |conn| {
        sqlx::query(
            "update customers set assigned_user_id = $3, assigned_team_id = $4, updated_at = $5 where tenant_id = $1 and id = $2",
        )
        .bind(tenant_id)
        .bind(id)
        .bind(user)
        .bind(team)
        .bind(now_ms())
        .execute(conn)
        .await
        .map(|r| r.rows_affected())
    })?;
    audit::record(tx, Some(tenant_id), actor, "customer.assign", "customer", Some(id)).await?;
    let customer = customer_in(tx, tenant_id, id).await?;
    events::enqueue(tx, tenant_id, actor, EventType::CustomerAssigned, Some(id), &customer).await?;
    Ok(customer)
}

/// A customer read inside `tx`.
pub(crate) async fn customer_in(tx: &mut Tx, tenant_id: &TenantId, id: &CustomerId) -> CoreResult<Customer> {
    CUSTOMERS
        .get_in::<CustomerRow>(tx, tenant_id, id)
        .await
        .map(Customer::from)
}

/// Unassigns every customer of a user (when the user is deleted).
pub(crate) async fn unassign_user_everywhere(tx: &mut Tx, tenant_id: &TenantId, user_id: &UserId) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "update customers set assigned_user_id = null where tenant_id = $1 and assigned_user_id = $2"
    )
    .bind(tenant_id)
    .bind(user_id)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}

/// Each tenant's kept customer count.
static CUSTOMER_COUNTS: SumTable = SumTable {
    table: "customer_counts",
    keys: &["tenant_id"],
    values: &["customers"],
};

/// Adds `delta` to the tenant's kept customer count, in the transaction of the
/// create or delete. The row is added to as the transaction commits
/// ([`Tx::add`]): on PostgreSQL its lock orders every create of the tenant, and
/// is then held for the commit alone.
pub(crate) fn count_customers(tx: &mut Tx, tenant_id: &TenantId, delta: i64) {
    tx.add(&CUSTOMER_COUNTS, vec![tenant_id.as_str().into()], &[delta]);
}
