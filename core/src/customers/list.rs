//! The customer list: filters, paging, and the kept count that spares an
//! unfiltered page its `count(*)`.

use serde::{Deserialize, Serialize};

use super::{Customer, CustomerRow, COLUMNS};
use crate::{
    error::CoreResult,
    ids::TenantId,
    model::{Page, PageRequest},
    validate::Paging,
    with_db, Services,
};

/// Filters of the customer list.
#[derive(Debug, Clone, Default, Serialize, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase")]
pub struct CustomerFilter {
    /// Only the customer with this external id.
    pub external_id: Option<String>,
    /// Matches e-mail, first or last name (case-insensitive, substring).
    pub search: Option<String>,
    /// Only customers with this tag (the whole tag), set by anyone: agents,
    /// integrations or the visitor's page.
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

impl Services {
    /// A page of the tenant's customers, newest first.
    pub async fn list_customers(
        &self,
        tenant_id: &TenantId,
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
             replace(tags, $4, '') <> tags or replace(tags, $5, '') <> tags or \
             replace(page_tags, $4, '') <> page_tags or replace(page_tags, $5, '') <> page_tags)";
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
}
