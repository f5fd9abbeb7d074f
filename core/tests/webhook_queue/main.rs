//! The webhook queue behind a large backlog, on SQLite and PostgreSQL alike:
//! events fan out after the commit, in order, to the endpoints that subscribe; a
//! failing endpoint falls behind and catches up in order; a failing endpoint is
//! held as a whole, claims serve the other endpoints, a crash
//! re-send is the same attempt, every statement that finds due work reads indexes
//! instead of scanning the queue, and retention prunes only finished work.
//!
//! The shared fixtures live here; each module tests one side of the queue.

use std::time::Duration;

use rapport_core::{
    audit::Actor,
    backoff::Backoff,
    ids::{TenantId, WebhookId},
    tenants::NewTenant,
    time::now_ms,
    webhooks::{
        deliveries::{AttemptResult, ClaimLimits, ClaimedDelivery, Outcome, RetryPolicy},
        WebhookIn,
    },
    with_db, Services,
};

mod catch_up;
mod claims;
mod fan_out;
mod query_plans;
mod retention;

const BACKLOG: usize = 20_000;

fn actor() -> Actor {
    Actor::system("tests")
}

/// A webhook endpoint at `url`, of a new tenant `name`.
async fn endpoint(s: &Services, name: &str, url: &str) -> (TenantId, WebhookId) {
    let tenant = s
        .create_tenant(
            NewTenant {
                name: Some(name.into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .id;
    let hook = s
        .create_webhook(
            &tenant,
            WebhookIn {
                url: Some(url.into()),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    (tenant, hook.endpoint.id)
}

fn limits() -> ClaimLimits {
    ClaimLimits {
        total: 128,
        per_endpoint: 16,
        per_tenant: 64,
        lease: Duration::from_secs(60),
    }
}

fn policy(wait: Duration) -> RetryPolicy {
    RetryPolicy {
        schedule: Backoff::new(vec![wait; 3]),
        ..Default::default()
    }
}

fn failed(d: &ClaimedDelivery) -> AttemptResult {
    AttemptResult {
        seq: d.seq,
        delivery_id: d.id.clone(),
        tenant_id: d.tenant_id.clone(),
        endpoint_id: d.endpoint_id.clone(),
        attempt: d.attempt,
        started_at: now_ms(),
        duration_ms: 3,
        status_code: None,
        error: Some("cannot connect: dns error".into()),
        response_excerpt: None,
        outcome: Outcome::Failed { retry_after: None },
    }
}

async fn count(s: &Services, sql: &str) -> i64 {
    with_db!(s.db(), |pool| sqlx::query_scalar(sql).fetch_one(pool).await).unwrap()
}
