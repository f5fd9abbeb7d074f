//! Fan-out: events stored one row per write fan out after the commit to the
//! endpoints that subscribe, each customer's in the order written.

use std::collections::HashMap;

use rapport_core::{backend_tests, testing::TestDb, webhooks::WebhookIn, with_db};

use super::{actor, count, endpoint};

/// Events of several customers, written one per transaction (as writes are),
/// fan out to exactly the endpoints that subscribe, each customer's in the
/// order written; the write itself stores one row whatever the endpoints.
async fn events_fan_out_after_the_commit_to_the_subscribers_in_order(db: TestDb) {
    use rapport_core::events::{self, EventType};
    let s = db.services();
    let (tenant, all) = endpoint(&s, "Alpha", "http://receiver.example/all").await;
    let mut subscribed = vec![all.clone()];
    for n in 0..19 {
        let hook = s
            .create_webhook(
                &tenant,
                WebhookIn {
                    url: Some(format!("http://receiver.example/{n}")),
                    event_types: Some(vec![if n % 2 == 0 { "customer.updated" } else { "message.sent" }.into()]),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        if n % 2 == 0 {
            subscribed.push(hook.endpoint.id);
        }
    }
    let (other_tenant, other) = endpoint(&s, "Beta", "http://receiver.example/beta").await;
    let deliveries = |sql: &'static str| {
        let s = s.clone();
        async move { count(&s, sql).await }
    };
    let mut written = Vec::new();
    for n in 0..30 {
        let customer = format!("c{}", n % 3);
        let mut tx = s.db().begin().await.unwrap();
        let listeners = events::enqueue(
            &mut tx,
            &tenant,
            &actor(),
            EventType::CustomerUpdated,
            Some(&customer),
            &serde_json::json!({"n": n}),
        )
        .await
        .unwrap();
        assert_eq!(listeners, 11);
        tx.commit().await.unwrap();
        written.push((customer, n));
    }
    // As if each was written by an instance whose clock ran behind the one
    // before: the stored times run backwards. The order is the database's.
    with_db!(s.writer(), |pool| sqlx::query(
        "update events set created_at = 4000000000000 - created_at where tenant_id = $1"
    )
    .bind(&tenant)
    .execute(pool)
    .await
    .map(|r| r.rows_affected()))
    .unwrap();
    let mut tx = s.db().begin().await.unwrap();
    events::enqueue(
        &mut tx,
        &other_tenant,
        &actor(),
        EventType::MessageSent,
        None,
        &serde_json::json!({}),
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        deliveries("select count(*) from webhook_deliveries").await,
        0,
        "a write stores its event, not a delivery per endpoint"
    );
    assert_eq!(deliveries("select count(*) from events where fanout_pending").await, 31);

    assert_eq!(s.fan_out_events().await.unwrap(), 31);
    assert_eq!(s.fan_out_events().await.unwrap(), 0, "each event fans out once");
    assert_eq!(deliveries("select count(*) from events where fanout_pending").await, 0);
    assert_eq!(deliveries("select count(*) from webhook_deliveries").await, 30 * 11 + 1);
    for endpoint in &subscribed {
        // In `seq` order, each customer's events come as written.
        let rows: Vec<(String, String)> = with_db!(s.db(), |pool| sqlx::query_as(
            "select d.ordering_key, e.payload from webhook_deliveries d join events e on e.id = d.event_id \
             where d.endpoint_id = $1 order by d.seq"
        )
        .bind(endpoint)
        .fetch_all(pool)
        .await)
        .unwrap();
        assert_eq!(rows.len(), 30, "{endpoint}");
        let mut last: HashMap<String, i64> = HashMap::new();
        for (customer, payload) in rows {
            let n = serde_json::from_str::<serde_json::Value>(&payload).unwrap()["n"]
                .as_i64()
                .unwrap();
            if let Some(before) = last.insert(customer.clone(), n) {
                assert!(before < n, "{customer}: {n} after {before}");
            }
        }
    }
    assert_eq!(
        count(
            &s,
            &format!("select count(*) from webhook_deliveries where endpoint_id = '{other}'")
        )
        .await,
        1,
        "another tenant's event reaches its own endpoint only"
    );
}

backend_tests!(events_fan_out_after_the_commit_to_the_subscribers_in_order);
