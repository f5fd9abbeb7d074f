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
mod types;
mod validation;
mod visitor;

pub(crate) use identity::{add_visitor_token, keep_claims, move_visitor_token, Claims, NewVisitor};
pub use identity::{identity_signature, IdentitySettings, IdentitySettingsIn};
pub use list::CustomerFilter;
pub use tags::TagList;
pub use types::{Assignment, Customer, CustomerErased, CustomerIn, Gender, MAX_CUSTOMER_TAGS};
use validation::{check_language, conflict};
pub(crate) use visitor::check_visitor_context;

use crate::{
    audit::{self, Actor},
    db::{SumTable, TenantTable, Tx},
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{CustomerId, TenantId, UserId},
    live::LiveEvent,
    time::{from_ms, now_ms},
    with_db, with_tx, Services,
};

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

impl Services {
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
