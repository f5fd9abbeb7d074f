//! Retention of the engines' history: the match log and read notifications
//! older than the period are pruned in batches, unread ones stay.

use rapport_core::{
    backend_tests, config::rules::QueueTargetType, reports::api::PresenceStatus, testing::TestDb, with_db,
};

use super::{queue_rule, Fixture};

/// Retention deletes the engines' history once it is older than the period:
/// the match log and read notifications go, unread ones stay.
async fn retention_prunes_the_engines_history(t: TestDb) {
    let f = Fixture::new(&t).await;
    let a = f.agent("a@example.com", PresenceStatus::Online).await;
    f.rule(queue_rule("Everyone", vec![], QueueTargetType::User, &a, 600))
        .await;
    let customer = f.writes("r1", "hello").await;
    assert_eq!(
        f.s.routing_log_of_conversation(&f.tenant, &customer, 10)
            .await
            .unwrap()
            .len(),
        1
    );
    f.sql(&format!(
        "insert into notifications (id, tenant_id, user_id, kind, title, body, created_at, read_at) values \
         ('read', '{t}', '{a}', 'SLA_MISSED', 'Read', '', 1, 2), \
         ('unread', '{t}', '{a}', 'SLA_MISSED', 'Unread', '', 1, null)",
        t = f.tenant
    ))
    .await;
    let kept = f.s.prune_before(1, 500, || async {}).await.unwrap();
    assert_eq!(kept.engine_history, 0, "nothing is older than the cutoff");
    let pruned =
        f.s.prune_before(rapport_core::time::now_ms() + 1, 1, || async {})
            .await
            .unwrap();
    assert_eq!(pruned.engine_history, 2, "one batch at a time, all of it");
    assert!(f
        .s
        .routing_log_of_conversation(&f.tenant, &customer, 10)
        .await
        .unwrap()
        .is_empty());
    let left: Vec<String> = with_db!(f.s.db(), |pool| sqlx::query_scalar("select id from notifications")
        .fetch_all(pool)
        .await)
    .unwrap();
    assert_eq!(left, ["unread"]);
}

backend_tests!(retention_prunes_the_engines_history);
