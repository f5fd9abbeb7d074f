//! A visitor rates a closed conversation (CSAT), in one transaction: the
//! rating is stored against the closing it answers (`conversations::csat`),
//! counted for the chat report (`CSAT_RESPONSES`, `CSAT_AVERAGE`, by the agent
//! assigned at the closing), `csat.submitted` is queued for webhooks, and after
//! the commit the inbox and the visitor's other tabs hear it.

use serde::Serialize;

use crate::{
    audit::Actor,
    conversations::{csat, Csat, CsatIn},
    error::CoreResult,
    events::{self, EventType},
    ids::{CustomerId, TenantId},
    live::LiveEvent,
    reports::{
        catalogue::CSAT,
        facts::{self, Fact},
    },
    Services,
};

/// The body of `csat.submitted`: the rating and whose conversation it rates.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CsatSubmitted {
    /// The customer whose conversation was rated.
    #[schema(value_type = String)]
    pub customer_id: CustomerId,
    /// The rating.
    #[serde(flatten)]
    pub csat: Csat,
}

impl Services {
    /// The visitor's rating of their closed conversation (see
    /// `conversations::csat` for when it is refused).
    pub async fn submit_csat(
        &self,
        tenant_id: &TenantId,
        customer_id: &CustomerId,
        input: &CsatIn,
        actor: &Actor,
    ) -> CoreResult<Csat> {
        let mut tx = self.db().begin().await?;
        let rating = csat::rate_in(&mut tx, tenant_id, customer_id, input).await?;
        let fact = Fact {
            kind: CSAT,
            at: rating.created_at.timestamp_millis(),
            value: rating.rating,
            agent: rating.user_id.as_deref(),
            subject: Some(customer_id),
            ..Fact::default()
        };
        facts::record(&mut tx, tenant_id, &fact).await?;
        let body = CsatSubmitted {
            customer_id: customer_id.clone(),
            csat: rating.clone(),
        };
        events::enqueue(
            &mut tx,
            tenant_id,
            actor,
            EventType::CsatSubmitted,
            Some(customer_id),
            &body,
        )
        .await?;
        self.commit_live(tx, tenant_id, customer_id, LiveEvent::Conversation)
            .await?;
        Ok(rating)
    }
}
