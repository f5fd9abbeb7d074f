//! Assignment: rules spread conversations by balance and capacity, a full team
//! queues the rest in arrival order, reopened and orphaned conversations find
//! someone present, and a tag reaches agents through their team.

use rapport_core::{
    backend_tests, config::rules::QueueTargetType, reports::api::PresenceStatus, teams::TeamIn, testing::TestDb,
};

use super::{actor, queue_rule, Fixture};

/// Balance and capacity (Chatwoot #11034, #10583, #10376): conversations spread
/// evenly, a full team queues the rest, and freed capacity serves the queue in
/// arrival order.
async fn balance_capacity_and_the_queue(t: TestDb) {
    let f = Fixture::new(&t).await;
    f.sql("update tenants set max_chats = 2").await;
    let a = f.agent("a@example.com", PresenceStatus::Online).await;
    let b = f.agent("b@example.com", PresenceStatus::Online).await;
    let c = f.agent("c@example.com", PresenceStatus::Away).await;
    let team = f.team(&[&a, &b, &c]).await;
    let rule = f
        .rule(queue_rule("Everyone", vec![], QueueTargetType::Team, &team, 600))
        .await;
    let mut customers = Vec::new();
    for n in 0..6 {
        customers.push(f.writes(&format!("c{n}"), "hello").await);
    }
    let mut loads = std::collections::HashMap::new();
    for customer in &customers {
        *loads.entry(f.assignee(customer).await.expect("assigned")).or_insert(0) += 1;
    }
    assert_eq!(loads.get(&a), Some(&2));
    assert_eq!(loads.get(&b), Some(&2));
    assert_eq!(
        loads.get(&c),
        Some(&2),
        "ANY takes agents who are away, never offline ones"
    );
    // The team is full: the next two wait, in arrival order.
    let seventh = f.writes("c6", "me too").await;
    let eighth = f.writes("c7", "and me").await;
    assert_eq!(f.assignee(&seventh).await, None);
    assert_eq!(f.queued().await, [seventh.clone(), eighth.clone()]);
    // A second message does not route again or jump the queue.
    f.writes("c7", "hello?").await;
    assert_eq!(f.queued().await, [seventh.clone(), eighth.clone()]);
    // b closes one conversation: the oldest waiting one goes to b.
    let of_b = customers[1].clone();
    assert_eq!(f.assignee(&of_b).await.as_deref(), Some(b.as_str()));
    f.close(&of_b).await;
    assert!(f.fire(None).await >= 1, "closing schedules a drain");
    assert_eq!(f.assignee(&seventh).await.as_deref(), Some(b.as_str()));
    assert_eq!(f.queued().await, std::slice::from_ref(&eighth));
    // The match log says why, and the rule report counts the matches.
    let log = f.s.routing_log_of_conversation(&f.tenant, &seventh, 10).await.unwrap();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].reason, "NEW");
    assert_eq!(log[0].result, "ASSIGNED");
    assert_eq!(log[0].user_id.as_deref(), Some(b.as_str()));
    assert_eq!(log[0].rule_id.as_deref(), Some(rule.as_str()));
    assert!(
        log[0].actions.iter().any(|a| a.contains("queued")),
        "{:?}",
        log[0].actions
    );
    assert!(
        log[0].actions.iter().any(|a| a.contains("from the queue")),
        "{:?}",
        log[0].actions
    );
    assert_eq!(f.facts("ROUTING_RULE_MATCH").await, 8);
    // A routing rule's actions are not action rules: those count their own
    // matches, reported by the visitor script.
    assert_eq!(f.facts("ACTION_RULE_MATCH").await, 0);
    assert_eq!(f.s.routing_log_of_rule(&f.tenant, &rule, 100).await.unwrap().len(), 8);
    // An agent coming online also drains the queue.
    let d = f.agent("d@example.com", PresenceStatus::Offline).await;
    f.s.save_team(
        &f.tenant,
        TeamIn {
            id: Some(team.clone()),
            name: Some("Support".into()),
            members: Some(vec![a.to_string(), b.to_string(), c.to_string(), d.to_string()]),
            ..Default::default()
        },
        &actor(),
    )
    .await
    .unwrap();
    f.s.set_presence(&f.tenant, &d, PresenceStatus::Online).await.unwrap();
    f.fire(None).await;
    assert_eq!(f.assignee(&eighth).await.as_deref(), Some(d.as_str()));
    assert!(f.queued().await.is_empty());
}

/// Chatwoot #9587: a reopened conversation is routed again, not handed back to
/// an agent who went offline; an agent going offline hands their open
/// conversations on.
async fn reopened_and_orphaned_conversations_find_someone_present(t: TestDb) {
    let f = Fixture::new(&t).await;
    let a = f.agent("a@example.com", PresenceStatus::Online).await;
    let b = f.agent("b@example.com", PresenceStatus::Offline).await;
    let team = f.team(&[&a, &b]).await;
    f.rule(queue_rule("Everyone", vec![], QueueTargetType::Team, &team, 600))
        .await;
    let first = f.writes("x1", "hi").await;
    let second = f.writes("x2", "hi").await;
    assert_eq!(f.assignee(&first).await.as_deref(), Some(a.as_str()));
    f.close(&first).await;
    // a leaves, b arrives; a still held `second`.
    f.s.set_presence(&f.tenant, &b, PresenceStatus::Online).await.unwrap();
    f.s.set_presence(&f.tenant, &a, PresenceStatus::Offline).await.unwrap();
    assert_eq!(f.assignee(&second).await.as_deref(), Some(b.as_str()));
    let log = f.s.routing_log_of_conversation(&f.tenant, &second, 10).await.unwrap();
    assert_eq!(log[0].reason, "AGENT_OFFLINE");
    // The customer of the closed conversation writes again.
    f.writes("x1", "me again").await;
    assert_eq!(f.assignee(&first).await.as_deref(), Some(b.as_str()));
    let log = f.s.routing_log_of_conversation(&f.tenant, &first, 10).await.unwrap();
    assert_eq!(log[0].reason, "REOPENED");
    // Nobody present: b goes offline too, and the conversations wait unassigned.
    f.s.set_presence(&f.tenant, &b, PresenceStatus::Offline).await.unwrap();
    assert_eq!(f.assignee(&first).await, None);
    assert_eq!(f.queued().await.len(), 2);
}

/// A team's tags are its members' skills: a `TAG` queue reaches them, and
/// only through a tag that is exactly the team's (`billing-ops` is not
/// `billing`).
async fn a_tag_reaches_agents_through_their_team(t: TestDb) {
    let f = Fixture::new(&t).await;
    f.sql("update tenants set max_chats = 1").await;
    let ada = f.agent("ada@example.com", PresenceStatus::Online).await;
    let cleo = f.agent("cleo@example.com", PresenceStatus::Online).await;
    for (name, tags, members) in [("Billing", "Billing", &ada), ("Ops", "billing-ops", &cleo)] {
        f.s.save_team(
            &f.tenant,
            TeamIn {
                name: Some(name.into()),
                members: Some(vec![members.to_string()]),
                tags: Some(vec![tags.into()]),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap();
    }
    f.rule(queue_rule("Billing", vec![], QueueTargetType::Tag, "billing", 600))
        .await;
    let first = f.writes("c-1", "my invoice").await;
    assert_eq!(f.assignee(&first).await.as_deref(), Some(ada.as_str()));
    // Ada is full; Cleo's team only looks like it: the next one waits.
    let second = f.writes("c-2", "my refund").await;
    assert_eq!(f.assignee(&second).await, None);
    assert_eq!(f.queued().await, [second]);
}

backend_tests!(
    balance_capacity_and_the_queue,
    reopened_and_orphaned_conversations_find_someone_present,
    a_tag_reaches_agents_through_their_team,
);
