//! The routing and SLA timers with real `rapport` processes: a queue wait, a
//! `NO_ANSWER` threshold and an SLA deadline that fall due while the process is
//! SIGKILLed each act once after the restart, and two instances on one
//! PostgreSQL act on each once. The harnesses are those of [`crate::jobs`].

use rapport_core::{
    audit::Actor,
    backend_tests,
    config::{
        rules::{
            Action, AgentState, Channel, Condition, QueueTarget, QueueTargetType, RoutingRule, SlaRule, SlaTrigger,
        },
        system_messages::SystemMessage,
    },
    conversations::{Direction, MessageIn, MessageType},
    db::Backend,
    ids::TenantId,
    model::Role,
    reports::api::PresenceStatus,
    tenants::NewTenant,
    testing::TestDb,
    users::NewUser,
    with_db, Services,
};

use crate::jobs::{fires_once_across_sigkill, runs_once_on_two_instances};

/// Customers in each tenant of an [`Armed`] pair.
const PER_KIND: usize = 3;
/// What fires for each [`Armed`] pair: a queue timeout or a `NO_ANSWER` reroute
/// per customer, and one missed SLA clock per customer.
const EXPECTED: usize = 4 * PER_KIND;

fn actor() -> Actor {
    Actor::system("tests")
}

/// A new tenant, named uniquely (its slug comes from its name).
async fn tenant(services: &Services) -> TenantId {
    services
        .create_tenant(
            NewTenant {
                name: Some(format!("Timers {}", uuid::Uuid::now_v7().simple())),
                ..Default::default()
            },
            &actor(),
        )
        .await
        .unwrap()
        .id
}

async fn agent(
    services: &Services,
    tenant_id: &TenantId,
    email: &str,
    status: PresenceStatus,
) -> rapport_core::ids::UserId {
    let id = services
        .create_user(
            NewUser {
                tenant_id: tenant_id.clone(),
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
    services.set_presence(tenant_id, &id, status).await.unwrap();
    id
}

fn queue_to(user: &str, max_wait_seconds: i64) -> Action {
    Action::Queue {
        target: QueueTarget {
            kind: QueueTargetType::User,
            value: user.into(),
        },
        agent_state: AgentState::Any,
        max_wait_seconds,
    }
}

fn rule(name: &str, priority: i64, conditions: Vec<Condition>, actions: Vec<Action>) -> RoutingRule {
    RoutingRule {
        name: Some(name.into()),
        active: Some(true),
        priority: Some(priority),
        conditions,
        types: vec![Channel::Chat],
        actions,
        ..Default::default()
    }
}

/// External ids of the customers who write in each tenant.
fn ids(prefix: &str) -> Vec<String> {
    (0..PER_KIND).map(|n| format!("{prefix}{n}")).collect()
}

/// Two tenants whose timers all fall due a second after their customers write:
/// in `waits`, customers wait for an offline specialist for 1 s and the
/// else-rule then sends a system message (`QUEUE_TIMEOUT`); in `reroutes`, they
/// go to agent A, and to agent B once unanswered for 1 s (`NO_ANSWER`). Both have
/// a 1 s first-response SLA, which nobody meets. Separate tenants, because a
/// `NO_ANSWER` threshold routes every waiting conversation of its tenant again.
#[derive(Clone)]
struct Armed {
    waits: TenantId,
    reroutes: TenantId,
}

impl Armed {
    async fn new(services: &Services) -> Armed {
        Armed {
            waits: tenant(services).await,
            reroutes: tenant(services).await,
        }
    }

    /// Sets the rules up and lets the customers write. Returns when the last
    /// timer is due.
    async fn arm(&self, services: &Services) -> i64 {
        let gone = agent(services, &self.waits, "gone@example.com", PresenceStatus::Offline).await;
        let busy = services
            .save_system_message(
                &self.waits,
                SystemMessage {
                    message: Some("All agents are busy.".into()),
                    language: Some("en".into()),
                    name: Some("busy".into()),
                    ..Default::default()
                },
                &actor(),
            )
            .await
            .unwrap()
            .meta
            .id
            .unwrap();
        let mut wait = rule("Specialist", 10, vec![], vec![queue_to(&gone, 1)]);
        wait.else_rules = vec![RoutingRule {
            name: Some("Tell them".into()),
            types: vec![Channel::Chat],
            actions: vec![Action::SystemMessage {
                system_message_id: busy,
            }],
            ..Default::default()
        }];
        services.save_routing_rule(&self.waits, wait, &actor()).await.unwrap();

        let a = agent(services, &self.reroutes, "a@example.com", PresenceStatus::Online).await;
        let b = agent(services, &self.reroutes, "b@example.com", PresenceStatus::Online).await;
        let escalate = rule(
            "Escalate",
            10,
            vec![Condition::NoAnswer { seconds: 1 }],
            vec![queue_to(&b, 600)],
        );
        let first = rule("First line", 20, vec![], vec![queue_to(&a, 600)]);
        for r in [escalate, first] {
            services.save_routing_rule(&self.reroutes, r, &actor()).await.unwrap();
        }

        let mut last_due = 0;
        for tenant_id in [&self.waits, &self.reroutes] {
            services
                .save_sla_rule(
                    tenant_id,
                    SlaRule {
                        name: Some("Instant".into()),
                        trigger: Some(SlaTrigger {
                            first_response_seconds: 1,
                            second_response_seconds: 1,
                        }),
                        ..Default::default()
                    },
                    &actor(),
                )
                .await
                .unwrap();
            for external_id in ids("c") {
                services
                    .receive_message(
                        tenant_id,
                        MessageIn {
                            customer_id: Some(external_id),
                            is_external_id: Some(true),
                            kind: Some(MessageType::Message),
                            message: Some("hello?".into()),
                            ..Default::default()
                        },
                        &actor(),
                    )
                    .await
                    .unwrap();
            }
            let due: Option<i64> = with_db!(services.db(), |pool| sqlx::query_scalar(
                "select max(due_at) from jobs where tenant_id = $1"
            )
            .bind(tenant_id)
            .fetch_one(pool)
            .await)
            .unwrap();
            last_due = last_due.max(due.expect("timers are pending"));
        }
        last_due
    }

    /// Timers that acted: reroutes and queue timeouts in the match log, and
    /// missed SLA clocks.
    async fn acted(&self, services: &Services) -> usize {
        let mut n = 0;
        for tenant_id in [&self.waits, &self.reroutes] {
            let of_tenant: i64 = with_db!(services.db(), |pool| sqlx::query_scalar(
                "select (select count(*) from routing_decisions where tenant_id = $1 \
                         and reason in ('NO_ANSWER', 'QUEUE_TIMEOUT')) \
                      + (select count(*) from sla_clocks where tenant_id = $1 and state = 'MISSED')"
            )
            .bind(tenant_id)
            .fetch_one(pool)
            .await)
            .unwrap();
            n += of_tenant as usize;
        }
        n
    }

    /// Each timer did what it was for: the waiting customers got the system
    /// message once, the unanswered ones went to agent B.
    async fn check_effects(&self, services: &Services) {
        let timeouts = decisions(services, &self.waits).await;
        assert_eq!(timeouts.len(), PER_KIND, "{timeouts:?}");
        assert!(
            timeouts.iter().all(|d| d.0 == "QUEUE_TIMEOUT" && d.1 == "MESSAGED"),
            "{timeouts:?}"
        );
        for external_id in ids("c") {
            let customer = services
                .find_customer_by_external_id(&self.waits, &external_id)
                .await
                .unwrap();
            let messages = services
                .list_messages(&self.waits, &customer.id, &Default::default())
                .await
                .unwrap();
            let sent = messages
                .results
                .iter()
                .filter(|m| m.direction == Direction::Outbound)
                .count();
            assert_eq!(sent, 1, "{external_id} got the system message once");
        }
        let b: String = with_db!(services.db(), |pool| sqlx::query_scalar(
            "select id from users where tenant_id = $1 and email = 'b@example.com'"
        )
        .bind(&self.reroutes)
        .fetch_one(pool)
        .await)
        .unwrap();
        let reroutes = decisions(services, &self.reroutes).await;
        assert_eq!(reroutes.len(), PER_KIND, "{reroutes:?}");
        assert!(
            reroutes
                .iter()
                .all(|d| d.0 == "NO_ANSWER" && d.1 == "ASSIGNED" && d.2.as_deref() == Some(b.as_str())),
            "{reroutes:?}"
        );
    }
}

/// `(reason, result, user)` of the timer-made decisions of `tenant_id`.
async fn decisions(services: &Services, tenant_id: &TenantId) -> Vec<(String, String, Option<String>)> {
    with_db!(services.db(), |pool| sqlx::query_as(
        "select reason, result, user_id from routing_decisions where tenant_id = $1 \
         and reason in ('NO_ANSWER', 'QUEUE_TIMEOUT')"
    )
    .bind(tenant_id)
    .fetch_all(pool)
    .await)
    .unwrap()
}

async fn routing_timers_due_while_killed_act_once_after_restart(db: TestDb) {
    let services = db.services();
    let armed = Armed::new(&services).await;
    let to_arm = armed.clone();
    let arm = |services: Services| async move { to_arm.arm(&services).await };
    let (s, a) = (&services, &armed);
    let fired = move || async move { a.acted(s).await };
    fires_once_across_sigkill(&db, &[], arm, fired, EXPECTED).await;
    armed.check_effects(&services).await;
}

async fn two_instances_act_on_each_routing_timer_once(db: TestDb) {
    const PAIRS: usize = 3;
    let services = db.services();
    let mut pairs = Vec::new();
    for _ in 0..PAIRS {
        pairs.push(Armed::new(&services).await);
    }
    let to_arm = pairs.clone();
    let arm = |services: Services| async move {
        for pair in &to_arm {
            pair.arm(&services).await;
        }
    };
    let (s, all) = (&services, &pairs);
    let fired = move || async move {
        let mut n = 0;
        for pair in all {
            n += pair.acted(s).await;
        }
        n
    };
    runs_once_on_two_instances(&db, &[], arm, fired, PAIRS * EXPECTED).await;
    if db.db.backend() == Backend::Postgres {
        for pair in &pairs {
            pair.check_effects(&services).await;
        }
    }
}

backend_tests!(
    routing_timers_due_while_killed_act_once_after_restart,
    two_instances_act_on_each_routing_timer_once,
);
