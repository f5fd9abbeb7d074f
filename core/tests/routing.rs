//! The routing and SLA engines on live traffic, on both backends: rules route
//! customer messages to agents by balance and capacity, queues drain in arrival
//! order, timers reroute and escalate, and every decision reaches the match log and
//! the rule report. Timers are fired by claiming their jobs as the runner does.

use rapport_core::ids::{CustomerId, UserId};
use rapport_core::{
    audit::Actor,
    backend_tests,
    config::{
        rules::{
            Action, AgentState, Channel, Condition, QueueTarget, QueueTargetType, RoutingRule, SlaRule, SlaTrigger,
        },
        system_messages::SystemMessage,
        watchdogs::{ReceiverType, WatchdogReceiver},
        Meta,
    },
    conversations::{ConversationStatus, Direction, MessageIn, MessageType, StatusIn},
    ids::TenantId,
    jobs::JobKind,
    model::Role,
    reports::api::PresenceStatus,
    teams::TeamIn,
    tenants::NewTenant,
    testing::{EnginesOnly, TestDb},
    users::NewUser,
    with_db, Services,
};

fn actor() -> Actor {
    Actor::system("tests")
}

struct Fixture {
    s: Services,
    tenant: TenantId,
}

impl Fixture {
    async fn new(t: &TestDb) -> Fixture {
        let s = t.services();
        let tenant = s
            .create_tenant(
                NewTenant {
                    name: Some("Routing".into()),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap()
            .id;
        Fixture { s, tenant }
    }

    async fn sql(&self, sql: &str) {
        with_db!(self.s.writer(), |pool| sqlx::query(sql)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))
        .unwrap();
    }

    async fn agent(&self, email: &str, status: PresenceStatus) -> UserId {
        let id = self
            .s
            .create_user(
                NewUser {
                    tenant_id: self.tenant.clone(),
                    email: email.into(),
                    password: None,
                    role: Role::Agent,
                    display_name: None,
                    platform_admin: false,
                },
                &actor(),
            )
            .await
            .unwrap()
            .id;
        self.s.set_presence(&self.tenant, &id, status).await.unwrap();
        id
    }

    async fn team(&self, members: &[&UserId]) -> String {
        self.s
            .save_team(
                &self.tenant,
                TeamIn {
                    name: Some("Support".into()),
                    members: Some(members.iter().map(|m| m.to_string()).collect()),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap()
            .id
            .into_string()
    }

    async fn rule(&self, rule: RoutingRule) -> String {
        self.s
            .save_routing_rule(&self.tenant, rule, &actor())
            .await
            .unwrap()
            .meta
            .id
            .unwrap()
    }

    /// A customer (by external id) writes; returns the customer's id.
    async fn writes(&self, external_id: &str, text: &str) -> CustomerId {
        let m = self
            .s
            .receive_message(
                &self.tenant,
                MessageIn {
                    customer_id: Some(external_id.into()),
                    is_external_id: Some(true),
                    kind: Some(MessageType::Message),
                    message: Some(text.into()),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap();
        m.customer_id
    }

    async fn assignee(&self, customer_id: &CustomerId) -> Option<UserId> {
        self.s
            .get_customer(&self.tenant, customer_id)
            .await
            .unwrap()
            .assigned_user
            .map(UserId::from)
    }

    async fn queued(&self) -> Vec<String> {
        with_db!(self.s.db(), |pool| sqlx::query_scalar(
            "select customer_id from routing_queue where tenant_id = $1 order by enqueued_at"
        )
        .bind(&self.tenant)
        .fetch_all(pool)
        .await)
        .unwrap()
    }

    async fn facts(&self, kind: &str) -> i64 {
        with_db!(self.s.db(), |pool| sqlx::query_scalar(
            "select count(*) from report_facts where tenant_id = $1 and kind = $2"
        )
        .bind(&self.tenant)
        .bind(kind)
        .fetch_one(pool)
        .await)
        .unwrap()
    }

    /// Makes the jobs of `kind` due now, then runs every due engine job once, as
    /// the runner would. Returns how many of `kind` (or of any kind) ran.
    async fn fire(&self, kind: Option<JobKind>) -> usize {
        if let Some(kind) = kind {
            with_db!(self.s.writer(), |pool| sqlx::query(
                "update jobs set due_at = 0 where kind = $1"
            )
            .bind(kind.as_str())
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))
            .unwrap();
        }
        let mut ran = 0;
        for job in self.s.claim_jobs(1000, 60_000).await.unwrap() {
            if matches!(job.job_kind(), Some(JobKind::Mail | JobKind::Retention)) {
                continue;
            }
            self.s.run_job(&job, &EnginesOnly).await.unwrap();
            self.s.complete_job(&job).await.unwrap();
            if kind.is_none_or(|k| k.as_str() == job.kind) {
                ran += 1;
            }
        }
        ran
    }

    /// The running SLA deadlines of one conversation.
    async fn deadlines(&self, customer_id: &str) -> Vec<(String, chrono::DateTime<chrono::Utc>)> {
        self.s
            .sla_deadlines(&self.tenant, &[customer_id.to_string()])
            .await
            .unwrap()
    }

    async fn close(&self, customer_id: &CustomerId) {
        self.s
            .set_conversation_status(
                &self.tenant,
                customer_id,
                StatusIn {
                    status: Some(ConversationStatus::Done),
                },
                &actor(),
            )
            .await
            .unwrap();
    }
}

fn queue_rule(
    name: &str,
    conditions: Vec<Condition>,
    kind: QueueTargetType,
    value: &str,
    max_wait: i64,
) -> RoutingRule {
    RoutingRule {
        meta: Meta::default(),
        name: Some(name.into()),
        active: Some(true),
        priority: None,
        conditions,
        types: vec![Channel::Chat],
        else_rules: vec![],
        actions: vec![Action::Queue {
            target: QueueTarget {
                kind,
                value: value.into(),
            },
            agent_state: AgentState::Any,
            max_wait_seconds: max_wait,
        }],
    }
}

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
    a_tag_reaches_agents_through_their_team,
    retention_prunes_the_engines_history,
    balance_capacity_and_the_queue,
    reopened_and_orphaned_conversations_find_someone_present,
    unanswered_messages_are_routed_again,
    a_finished_wait_asks_the_else_rules,
    sla_clocks_are_met_or_missed_and_alert,
    an_sla_on_slow_answers_starts_once_the_wait_is_long,
);
