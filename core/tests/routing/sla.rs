//! SLA clocks: met by an answer or missed, counted and alerted, and clocks on
//! slow answers that start only once a message has waited long enough.

use rapport_core::{
    backend_tests,
    config::{
        rules::{Condition, QueueTargetType, SlaRule, SlaTrigger},
        watchdogs::{ReceiverType, WatchdogReceiver},
    },
    conversations::{MessageIn, MessageType},
    jobs::JobKind,
    reports::api::PresenceStatus,
    testing::TestDb,
    with_db,
};

use super::{actor, queue_rule, Fixture};

/// SLA clocks: the first response is met by an answer; the second is missed,
/// counted, and sent to the assigned agent and (with `watchdogEnabled`) by mail.
async fn sla_clocks_are_met_or_missed_and_alert(t: TestDb) {
    let f = Fixture::new(&t).await;
    let a = f.agent("a@example.com", PresenceStatus::Online).await;
    f.rule(queue_rule("Everyone", vec![], QueueTargetType::User, &a, 600))
        .await;
    let sla =
        f.s.save_sla_rule(
            &f.tenant,
            SlaRule {
                name: Some("Fast".into()),
                trigger: Some(SlaTrigger {
                    first_response_seconds: 60,
                    second_response_seconds: 120,
                }),
                receivers: vec![WatchdogReceiver {
                    kind: ReceiverType::Email,
                    value: "lead@example.com".into(),
                }],
                watchdog_enabled: Some(true),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .meta
        .id
        .unwrap();
    let customer = f.writes("s1", "help").await;
    let deadlines = f.s.sla_deadlines(&f.tenant, &[customer.to_string()]).await.unwrap();
    assert_eq!(deadlines.len(), 1);
    let left = (deadlines[0].1 - chrono::Utc::now()).num_seconds();
    assert!((55..=60).contains(&left), "{left}");
    f.s.send_message(
        &f.tenant,
        MessageIn {
            customer_id: Some(customer.to_string()),
            is_external_id: Some(false),
            kind: Some(MessageType::Message),
            message: Some("On it".into()),
            ..Default::default()
        },
        rapport_core::conversations::Channel::Api,
        &actor(),
    )
    .await
    .unwrap();
    assert!(f
        .s
        .sla_deadlines(&f.tenant, &[customer.to_string()])
        .await
        .unwrap()
        .is_empty());
    f.writes("s1", "still there?").await;
    assert_eq!(f.fire(Some(JobKind::SlaDeadline)).await, 1);
    // The alert is delivered by a job of its own, once the miss has committed.
    f.fire(None).await;
    assert_eq!(f.facts("SLA_1_MATCH").await, 1);
    assert_eq!(f.facts("SLA_1_MISS").await, 0);
    assert_eq!(f.facts("SLA_2_MATCH").await, 1);
    assert_eq!(f.facts("SLA_2_MISS").await, 1);
    let (notified, mailed): (i64, i64) = with_db!(f.s.db(), |pool| sqlx::query_as(
        "select (select count(*) from notifications where tenant_id = $1 and user_id = $2), \
                (select count(*) from mail_outbox where tenant_id = $1 and to_address = 'lead@example.com')"
    )
    .bind(&f.tenant)
    .bind(&a)
    .fetch_one(pool)
    .await)
    .unwrap();
    assert_eq!((notified, mailed), (1, 1));
    // Firing again changes nothing: a clock is missed once.
    assert_eq!(f.fire(Some(JobKind::SlaDeadline)).await, 0);
    assert_eq!(f.facts("SLA_2_MISS").await, 1);
    let _ = sla;
}

/// An SLA rule with `NO_ANSWER {seconds}` is about slow answers: its clock
/// starts once a message has waited that long, counting from the message; a
/// message answered before never starts one.
async fn an_sla_on_slow_answers_starts_once_the_wait_is_long(t: TestDb) {
    let f = Fixture::new(&t).await;
    let a = f.agent("a@example.com", PresenceStatus::Online).await;
    f.rule(queue_rule("Everyone", vec![], QueueTargetType::User, &a, 600))
        .await;
    f.s.save_sla_rule(
        &f.tenant,
        SlaRule {
            name: Some("Slow answers".into()),
            conditions: vec![Condition::NoAnswer { seconds: 300 }],
            trigger: Some(SlaTrigger {
                first_response_seconds: 600,
                second_response_seconds: 600,
            }),
            ..Default::default()
        },
        &actor(),
    )
    .await
    .unwrap();
    let slow = f.writes("slow", "hello?").await;
    assert!(f.deadlines(&slow).await.is_empty(), "no clock before the wait is long");
    assert_eq!(f.fire(Some(JobKind::SlaStart)).await, 1);
    let deadlines = f.deadlines(&slow).await;
    assert_eq!(deadlines.len(), 1);
    let left = (deadlines[0].1 - chrono::Utc::now()).num_seconds();
    assert!((590..=600).contains(&left), "counted from the message: {left}");
    assert_eq!(f.facts("SLA_1_MATCH").await, 1);

    // Answered in time: nothing starts.
    let quick = f.writes("quick", "hi").await;
    f.s.send_message(
        &f.tenant,
        MessageIn {
            customer_id: Some(quick.to_string()),
            is_external_id: Some(false),
            kind: Some(MessageType::Message),
            message: Some("Hello!".into()),
            ..Default::default()
        },
        rapport_core::conversations::Channel::Api,
        &actor(),
    )
    .await
    .unwrap();
    assert_eq!(f.fire(Some(JobKind::SlaStart)).await, 0);
    assert!(f.deadlines(&quick).await.is_empty());
    assert_eq!(f.facts("SLA_1_MATCH").await, 1);
}

backend_tests!(
    sla_clocks_are_met_or_missed_and_alert,
    an_sla_on_slow_answers_starts_once_the_wait_is_long,
);
