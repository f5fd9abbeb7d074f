//! A customer's tags, as agents and the visitor script change them. The two
//! are kept apart: `tags` are set by agents and integrations, `pageTags` by the
//! visitor's page, which anyone can write, so rules say which they trust.

use super::{customer_in, write_tags, Customer, MAX_CUSTOMER_TAGS};
use crate::{
    audit::{self, Actor},
    error::{CoreError, CoreResult},
    events::{self, EventType},
    ids::{CustomerId, TenantId},
    time::now_ms,
    validate::Checks,
    with_tx, Services,
};

/// Which of a customer's tag lists a change is to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TagList {
    /// `tags`: set by agents and integrations.
    Trusted,
    /// `pageTags`: set by the visitor's page.
    Page,
}

impl TagList {
    fn column(self) -> &'static str {
        match self {
            TagList::Trusted => "tags",
            TagList::Page => "page_tags",
        }
    }

    fn of(self, customer: Customer) -> Vec<String> {
        match self {
            TagList::Trusted => customer.tags,
            TagList::Page => customer.page_tags,
        }
    }
}

impl Services {
    /// Adds and removes tags of one of a customer's lists (agents in the inbox:
    /// `tags`; the visitor script: `pageTags`): a tag already there is not
    /// added twice, and both compare tags case-insensitively, as `HAS_TAG`
    /// does. Fires `customer.updated` when the tags change. At most
    /// [`MAX_CUSTOMER_TAGS`] may result in a list (`tags`, `too_many`).
    pub async fn change_customer_tags(
        &self,
        tenant_id: &TenantId,
        id: &CustomerId,
        list: TagList,
        add: &[String],
        remove: &[String],
        actor: &Actor,
    ) -> CoreResult<Customer> {
        let mut checks = Checks::new();
        let add: Vec<String> = add.iter().map(|t| t.trim().to_string()).collect();
        checks.tags("tags", &add, MAX_CUSTOMER_TAGS);
        checks.finish()?;
        let mut tx = self.db().begin().await?;
        // A write first locks the row (PostgreSQL) or the database (SQLite), so
        // two changes at once cannot lose each other's tags.
        let touched = with_tx!(&mut tx, |conn| sqlx::query(
            "update customers set tags = tags where tenant_id = $1 and id = $2"
        )
        .bind(tenant_id)
        .bind(id)
        .execute(conn)
        .await
        .map(|r| r.rows_affected()))?;
        if touched == 0 {
            return Err(CoreError::NotFound("customer"));
        }
        let before = list.of(customer_in(&mut tx, tenant_id, id).await?);
        let same = |a: &String, b: &String| a.to_lowercase() == b.to_lowercase();
        let mut tags: Vec<String> = before
            .iter()
            .filter(|t| !remove.iter().any(|r| same(t, &r.trim().to_string())))
            .cloned()
            .collect();
        for tag in add {
            if !tags.iter().any(|t| same(t, &tag)) {
                tags.push(tag);
            }
        }
        if tags.len() > MAX_CUSTOMER_TAGS {
            return Err(CoreError::invalid(
                "tags",
                "too_many",
                format!("a customer may carry at most {MAX_CUSTOMER_TAGS} tags"),
            ));
        }
        if tags == before {
            return customer_in(&mut tx, tenant_id, id).await;
        }
        let sql = format!(
            "update customers set {} = $3, updated_at = $4 where tenant_id = $1 and id = $2",
            list.column()
        );
        with_tx!(&mut tx, |conn| sqlx::query(&sql)
            .bind(tenant_id)
            .bind(id)
            .bind(write_tags(&tags))
            .bind(now_ms())
            .execute(conn)
            .await
            .map(|r| r.rows_affected()))?;
        audit::record(&mut tx, Some(tenant_id), actor, "customer.tags", "customer", Some(id)).await?;
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
}
