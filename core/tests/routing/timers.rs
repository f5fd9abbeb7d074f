//! Routing timers: an unanswered message is routed again, and a queue's
//! finished wait hands the conversation to the queuing rule's else-rules.

use rapport_core::{
    backend_tests,
    config::{
        rules::{Action, Channel, Condition, QueueTargetType, RoutingRule},
        system_messages::SystemMessage,
    },
    conversations::{ConversationStatus, Direction, MessageIn, MessageType},
    jobs::JobKind,
    reports::api::PresenceStatus,
    testing::TestDb,
};

use super::{actor, queue_rule, Fixture};

/// `NO_ANSWER`: the timer fires, and the first rule that matches then (placed
/// above the catch-all) routes to someone else. An answer in time cancels it.
async fn unanswered_messages_are_routed_again(t: TestDb) {
    let f = Fixture::new(&t).await;
    let a = f.agent("a@example.com", PresenceStatus::Online).await;
    let b = f.agent("b@example.com", PresenceStatus::Online).await;
    let mut escalate = queue_rule(
        "Escalate",
        vec![Condition::NoAnswer { seconds: 30 }],
        QueueTargetType::User,
        &b,
        600,
    );
    escalate.priority = Some(10);
    f.rule(escalate).await;
    let mut first = queue_rule("First line", vec![], QueueTargetType::User, &a, 600);
    first.priority = Some(20);
    f.rule(first).await;
    let waiting = f.writes("w1", "anyone?").await;
    assert_eq!(f.assignee(&waiting).await.as_deref(), Some(a.as_str()));
    assert_eq!(f.fire(Some(JobKind::NoAnswer)).await, 1);
    assert_eq!(f.assignee(&waiting).await.as_deref(), Some(b.as_str()));
    let log = f.s.routing_log_of_conversation(&f.tenant, &waiting, 10).await.unwrap();
    assert_eq!(log[0].reason, "NO_ANSWER");
    assert_eq!(log[0].rule_names, ["Escalate"]);
    // Answered in time: no timer is left to fire.
    let answered = f.writes("w2", "hello").await;
    f.s.send_message(
        &f.tenant,
        MessageIn {
            customer_id: Some(answered.to_string()),
            is_external_id: Some(false),
            kind: Some(MessageType::Message),
            message: Some("Hi, how can I help?".into()),
            ..Default::default()
        },
        rapport_core::conversations::Channel::Api,
        &actor(),
    )
    .await
    .unwrap();
    assert_eq!(f.fire(Some(JobKind::NoAnswer)).await, 0);
    assert_eq!(f.assignee(&answered).await.as_deref(), Some(a.as_str()));
}

/// A queue's wait ends: the queuing rule's else-rules decide. Here they send a
/// system message in the customer's language, which answers nobody.
async fn a_finished_wait_asks_the_else_rules(t: TestDb) {
    let f = Fixture::new(&t).await;
    let gone = f.agent("gone@example.com", PresenceStatus::Offline).await;
    let mut ids = Vec::new();
    for (language, text) in [("en", "All agents are busy."), ("de", "Alle sind beschäftigt.")] {
        let saved =
            f.s.save_system_message(
                &f.tenant,
                SystemMessage {
                    message: Some(text.into()),
                    language: Some(language.into()),
                    name: Some("busy".into()),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        ids.push(saved.meta.id.unwrap());
    }
    let mut rule = queue_rule("Specialist", vec![], QueueTargetType::User, &gone, 60);
    rule.else_rules = vec![RoutingRule {
        name: Some("Tell them".into()),
        types: vec![Channel::Chat],
        actions: vec![Action::SystemMessage {
            system_message_id: ids[0].clone(),
        }],
        ..Default::default()
    }];
    f.rule(rule).await;
    let customer = f.writes("q1", "hallo").await;
    f.sql(&format!(
        "update customers set language = 'de-AT' where id = '{customer}'"
    ))
    .await;
    assert_eq!(f.queued().await, std::slice::from_ref(&customer));
    assert_eq!(f.fire(Some(JobKind::QueueTimeout)).await, 1);
    assert!(f.queued().await.is_empty());
    let messages =
        f.s.list_messages(&f.tenant, &customer, &Default::default())
            .await
            .unwrap();
    let sent: Vec<_> = messages
        .results
        .iter()
        .filter(|m| m.direction == Direction::Outbound)
        .collect();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].message.as_deref(), Some("Alle sind beschäftigt."));
    let conversation = f.s.get_conversation(&f.tenant, &customer).await.unwrap();
    assert_eq!(
        conversation.status,
        ConversationStatus::Unread,
        "a system message answers nobody"
    );
    let log = f.s.routing_log_of_conversation(&f.tenant, &customer, 10).await.unwrap();
    assert_eq!(log[0].reason, "QUEUE_TIMEOUT");
    assert_eq!(log[0].result, "MESSAGED");
    assert_eq!(log[0].rule_names, ["Specialist", "Tell them"]);
}

backend_tests!(
    unanswered_messages_are_routed_again,
    a_finished_wait_asks_the_else_rules,
);
