//! The routing and SLA engines on live traffic, on both backends: rules route
//! customer messages to agents by balance and capacity, queues drain in arrival
//! order, timers reroute and escalate, and every decision reaches the match log and
//! the rule report. Timers are fired by claiming their jobs as the runner does.
//!
//! The fixture and rule builder live here; each module tests one side of the
//! engines (assignment, timers, SLA clocks) or the pruning of their history.

use rapport_core::ids::{CustomerId, UserId};
use rapport_core::{
    audit::Actor,
    config::{
        rules::{Action, AgentState, Channel, Condition, QueueTarget, QueueTargetType, RoutingRule},
        Meta,
    },
    conversations::{ConversationStatus, MessageIn, MessageType, StatusIn},
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

mod assignment;
mod retention;
mod sla;
mod timers;

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
