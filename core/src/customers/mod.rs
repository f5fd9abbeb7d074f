//! Customers (spec 2.1): the people who talk to a tenant. A customer may be assigned
//! to a user or to a team, never both.
//!
//! Our extensions, which routing rules read: `tags` (`HAS_TAG`), `language` (which
//! system message a rule sends) and `pageUrl` (the page the visitor is on, for the
//! `URL` condition; set by the widget, read-only here). On an override or update an
//! omitted `tags` or `language` keeps what the customer has, so that clients that
//! know only the spec's fields never wipe what the widget or agents set.

mod tags;
mod visitor;

pub(crate) use visitor::check_visitor_context;

use serde::{Deserialize, Serialize};

use crate::{
    audit::{self, Actor},
    db::{unique_violation, Tx},
    error::{CoreError, CoreResult},
    events::{self, EventType},
    live::LiveEvent,
    model::{Page, PageRequest},
    time::{from_ms, now_ms},
    validate::{is_email, Checks, Paging},
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
    pub id: String,
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
    #[schema(max_length = 35, example = "de-CH")]
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
    pub user_id: Option<String>,
    /// Id of a team of this tenant (not with `userId`).
    pub team_id: Option<String>,
}

impl Assignment {
    /// `userId` and `teamId` exclude each other, as a JSON Schema condition.
    pub fn schema_conditions() -> serde_json::Value {
        serde_json::json!([{"not": {"required": ["userId", "teamId"]}}])
    }
}

/// Filters of the customer list.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct CustomerFilter {
    /// Only the customer with this external id.
    pub external_id: Option<String>,
    /// Matches e-mail, first or last name (case-insensitive, substring).
    pub search: Option<String>,
    /// Only customers with this tag (case-insensitive, the whole tag).
    pub tag: Option<String>,
}

/// A row of a customer page: the customer and, when the list is unfiltered, the
/// tenant's kept customer count.
#[derive(sqlx::FromRow)]
struct PagedCustomerRow {
    #[sqlx(flatten)]
    customer: CustomerRow,
    kept_total: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct CustomerRow {
    id: String,
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
            created_at: from_ms(r.created_at),
            updated_at: from_ms(r.updated_at),
        }
    }
}

const COLUMNS: &str = "id, email, first_name, last_name, gender, external_id, assigned_user_id, assigned_team_id, \
     tags, language, page_url, created_at, updated_at";

struct ValidCustomer {
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
    async fn validate_customer(&self, tenant_id: &str, input: &CustomerIn) -> CoreResult<ValidCustomer> {
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

    async fn resolve_assignment(
        &self,
        tenant_id: &str,
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
                Ok(found) => Some(found.id),
                Err(CoreError::NotFound(_)) => {
                    checks.push(user_field, "unknown_reference", format!("no user {u} in this tenant"));
                    None
                }
                Err(e) => return Err(e),
            },
            None => None,
        };
        let team = match team {
            Some(t) => match self.get_team(tenant_id, t).await {
                Ok(found) => Some(found.id),
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
    pub async fn save_customer(&self, tenant_id: &str, input: CustomerIn, actor: &Actor) -> CoreResult<Customer> {
        if let Some(id) = input.id.clone() {
            return self.update_customer(tenant_id, &id, input, actor).await;
        }
        let id = uuid::Uuid::now_v7().to_string();
        self.create_customer_with_id(tenant_id, &id, input, None, None, actor)
            .await
    }

    /// Creates customer `id`; `visitor_token_hash` links it to a widget visitor,
    /// whose page is `page_url` (checked by the caller).
    pub(crate) async fn create_customer_with_id(
        &self,
        tenant_id: &str,
        id: &str,
        input: CustomerIn,
        visitor_token_hash: Option<&str>,
        page_url: Option<&str>,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        let valid = self.validate_customer(tenant_id, &input).await?;
        let now = now_ms();
        let mut tx = self.db().begin().await?;
        with_tx!(&mut tx, |conn| sqlx::query(
            "insert into customers (id, tenant_id, email, first_name, last_name, gender, external_id, \
             assigned_user_id, assigned_team_id, created_at, updated_at, status, status_changed_at, visitor_token_hash, \
             tags, language, page_url) \
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, 'UNREAD', $10, $11, $12, $13, $14)"
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
        .bind(visitor_token_hash)
        .bind(valid.tags.as_deref().unwrap_or("[]"))
        .bind(valid.language.clone().flatten())
        .bind(page_url)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))
        .map_err(conflict)?;
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
        count_customers(&mut tx, tenant_id, 1).await?;
        self.commit_live(tx, tenant_id, id, LiveEvent::Conversation(conversation))
            .await?;
        Ok(customer)
    }

    /// Replaces a customer's fields; an omitted `tags` or `language` is kept.
    pub async fn update_customer(
        &self,
        tenant_id: &str,
        id: &str,
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

    /// Assigns a customer to a user or a team, or to nobody when both are omitted.
    pub async fn assign_customer(
        &self,
        tenant_id: &str,
        id: &str,
        assignment: Assignment,
        actor: &Actor,
    ) -> CoreResult<Customer> {
        self.get_customer(tenant_id, id).await?;
        let mut checks = Checks::new();
        let (user, team) = self
            .resolve_assignment(
                tenant_id,
                &mut checks,
                ("userId", assignment.user_id.as_deref()),
                ("teamId", assignment.team_id.as_deref()),
            )
            .await?;
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        let customer = assign_in(&mut tx, tenant_id, id, user.as_deref(), team.as_deref(), actor).await?;
        // A person decided: the conversation leaves any routing queue, and capacity
        // may have moved between agents.
        crate::engine::dispatch::assigned_by_hand(&mut tx, tenant_id, id).await?;
        self.commit_live(tx, tenant_id, id, LiveEvent::Assigned(customer.clone()))
            .await?;
        Ok(customer)
    }

    /// One customer of the tenant.
    pub async fn get_customer(&self, tenant_id: &str, id: &str) -> CoreResult<Customer> {
        let sql = format!("select {COLUMNS} from customers where tenant_id = $1 and id = $2");
        let row: Option<CustomerRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        row.map(Customer::from).ok_or(CoreError::NotFound("customer"))
    }

    /// A customer of the tenant by external id.
    pub async fn find_customer_by_external_id(&self, tenant_id: &str, external_id: &str) -> CoreResult<Customer> {
        let sql = format!("select {COLUMNS} from customers where tenant_id = $1 and external_id = $2");
        let row: Option<CustomerRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(external_id)
            .fetch_optional(pool)
            .await)?;
        row.map(Customer::from).ok_or(CoreError::NotFound("customer"))
    }

    /// A page of the tenant's customers, newest first.
    pub async fn list_customers(
        &self,
        tenant_id: &str,
        filter: &CustomerFilter,
        page: &PageRequest,
    ) -> CoreResult<Page<Customer>> {
        let paging = Paging::from_request(page)?;
        let pattern = filter
            .search
            .as_deref()
            .map(|s| format!("%{}%", s.trim().to_lowercase()));
        // A tag is found as a whole item of the stored JSON array: `["vip"` or
        // `,"vip"`. Inside a JSON string a quote is always escaped, so `["` and
        // `,"` only ever start an item. `replace` finds it on both backends;
        // the match is exact, like the tag.
        let tag = filter
            .tag
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(|t| serde_json::Value::from(t).to_string());
        let (first_tag, later_tag) = (
            tag.as_ref().map(|t| format!("[{t}")),
            tag.as_ref().map(|t| format!(",{t}")),
        );
        let condition = "tenant_id = $1 and ($2 is null or external_id = $2) and ($3 is null or email like $3 \
             or lower(first_name) like $3 or lower(last_name) like $3) and ($4 is null or \
             replace(tags, $4, '') <> tags or replace(tags, $5, '') <> tags)";
        // Unfiltered, the total is the tenant's kept count (one row, however many
        // customers there are), read by the page's own statement: every statement
        // is a round trip to a database thread, which is most of a small list's
        // cost on SQLite. Filtered, and for a page past the end, it is counted.
        let unfiltered = filter.external_id.is_none() && pattern.is_none() && tag.is_none();
        let kept_total = if unfiltered {
            "(select customers from customer_counts where tenant_id = $1)"
        } else {
            "null"
        };
        let sql = format!(
            "select {COLUMNS}, {kept_total} as kept_total from customers where {condition} \
             order by created_at desc, id desc limit $6 offset $7"
        );
        let count_sql = format!("select count(*) from customers where {condition}");
        let (total, rows): (i64, Vec<PagedCustomerRow>) = with_db!(self.db(), |pool| {
            let rows: Vec<PagedCustomerRow> = sqlx::query_as(&sql)
                .bind(tenant_id)
                .bind(&filter.external_id)
                .bind(&pattern)
                .bind(&first_tag)
                .bind(&later_tag)
                .bind(paging.limit)
                .bind(paging.offset)
                .fetch_all(pool)
                .await?;
            let total = match rows.first().and_then(|r| r.kept_total) {
                Some(total) => total,
                None => {
                    sqlx::query_scalar(&count_sql)
                        .bind(tenant_id)
                        .bind(&filter.external_id)
                        .bind(&pattern)
                        .bind(&first_tag)
                        .bind(&later_tag)
                        .fetch_one(pool)
                        .await?
                }
            };
            Ok::<_, sqlx::Error>((total, rows))
        })?;
        let rows: Vec<CustomerRow> = rows.into_iter().map(|r| r.customer).collect();
        Ok(paging.page(total, rows.into_iter().map(Customer::from).collect()))
    }

    /// Deletes a customer.
    pub async fn delete_customer(&self, tenant_id: &str, id: &str, actor: &Actor) -> CoreResult<()> {
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
        count_customers(&mut tx, tenant_id, -1).await?;
        audit::record(&mut tx, Some(tenant_id), actor, "customer.delete", "customer", Some(id)).await?;
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::CustomerDeleted,
            Some(id),
            &customer,
        )
        .await?;
        tx.commit().await?;
        self.wake_outbox();
        Ok(())
    }
}

/// Assigns a customer to `user` or `team` (or neither) in `tx`: audited, and
/// `customer.assigned` queued. The caller publishes `LiveEvent::Assigned` after
/// the commit. Used by the REST/dashboard assignment and by the routing engine.
pub(crate) async fn assign_in(
    tx: &mut Tx,
    tenant_id: &str,
    id: &str,
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
    crate::engine::watchdogs::customer_assigned(tx, tenant_id, &customer).await?;
    events::enqueue(tx, tenant_id, actor, EventType::CustomerAssigned, Some(id), &customer).await?;
    Ok(customer)
}

/// A customer read inside `tx`.
pub(crate) async fn customer_in(tx: &mut Tx, tenant_id: &str, id: &str) -> CoreResult<Customer> {
    let sql = format!("select {COLUMNS} from customers where tenant_id = $1 and id = $2");
    let row: Option<CustomerRow> = with_tx!(tx, |conn| sqlx::query_as(&sql)
        .bind(tenant_id)
        .bind(id)
        .fetch_optional(conn)
        .await)?;
    row.map(Customer::from).ok_or(CoreError::NotFound("customer"))
}

/// Unassigns every customer of a user (when the user is deleted).
pub(crate) async fn unassign_user_everywhere(tx: &mut Tx, tenant_id: &str, user_id: &str) -> CoreResult<()> {
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

/// Adds `delta` to the tenant's kept customer count, in the transaction of the
/// create or delete. Called last before the commit, so that on PostgreSQL the
/// count's row lock, which orders concurrent creates of one tenant, is held only
/// for the commit itself.
async fn count_customers(tx: &mut Tx, tenant_id: &str, delta: i64) -> CoreResult<()> {
    with_tx!(tx, |conn| sqlx::query(
        "insert into customer_counts (tenant_id, customers) values ($1, $2) \
         on conflict (tenant_id) do update set customers = customer_counts.customers + $2"
    )
    .bind(tenant_id)
    .bind(delta)
    .execute(conn)
    .await
    .map(|r| r.rows_affected()))?;
    Ok(())
}
