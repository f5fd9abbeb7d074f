//! Reading messages back: one, a customer's history, and marking them delivered.

use super::*;
use crate::{
    db::keyed_page,
    ids::{CustomerId, MessageId, TenantId},
};

impl Services {
    /// One message of the tenant.
    pub async fn get_message(&self, tenant_id: &TenantId, id: &MessageId) -> CoreResult<Message> {
        let sql = format!(
            "select {MESSAGE_COLUMNS} from messages m join customers c on c.id = m.customer_id \
             where m.tenant_id = $1 and m.id = $2"
        );
        let row: Option<MessageRow> = with_db!(self.db(), |pool| sqlx::query_as(&sql)
            .bind(tenant_id)
            .bind(id)
            .fetch_optional(pool)
            .await)?;
        Ok(row.ok_or(CoreError::NotFound("message"))?.into())
    }

    /// A page of a customer's messages, newest first.
    pub async fn list_messages(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        page: &PageRequest,
    ) -> CoreResult<Page<Message>> {
        let paging = Paging::from_request(page)?;
        self.get_customer(tenant_id, customer_id).await?;
        let sql = format!(
            "select {MESSAGE_COLUMNS} from messages m join customers c on c.id = m.customer_id \
             where m.tenant_id = $1 and m.customer_id = $2 order by m.created_at desc, m.id desc limit $3 offset $4"
        );
        let (total, rows): (i64, Vec<MessageRow>) = keyed_page(
            self.db(),
            "select count(*) from messages where tenant_id = $1 and customer_id = $2",
            &sql,
            tenant_id,
            customer_id,
            &paging,
        )
        .await?;
        Ok(paging.page(total, rows.into_iter().map(Message::from).collect()))
    }

    /// Marks outbound messages as received by the customer's widget.
    pub async fn mark_delivered(&self, tenant_id: &TenantId, customer_id: &CustomerId, ids: &[&str]) -> CoreResult<()> {
        let sql = format!(
            "update messages set delivered_at = $3 where tenant_id = $1 and customer_id = $2 \
             and delivered_at is null and id in ({})",
            crate::db::placeholders(4, ids.len())
        );
        with_db!(self.writer(), |pool| {
            let mut q = sqlx::query(&sql).bind(tenant_id).bind(customer_id).bind(now_ms());
            for id in ids {
                q = q.bind(*id);
            }
            q.execute(pool).await.map(|r| r.rows_affected())
        })?;
        Ok(())
    }
}
