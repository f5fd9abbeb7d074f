-- The engines (issue 22): durable jobs, routing queue and match log, SLA clocks,
-- notifications and grouped watchdog alerts, plus the settings they read.
-- Keep in step with migrations/postgres.

-- One durable job table for every timer and background task (server/src/workers).
-- A job is due at `due_at`; a runner claims it by setting `lease_until`, and a job
-- whose lease lapsed (its runner died) is claimed again. `(kind, job_key)` is unique,
-- so scheduling the same timer twice moves it instead of adding a second one.
create table jobs (
    id          text primary key,
    tenant_id   text references tenants (id) on delete cascade,
    kind        text not null,
    job_key     text not null,
    payload     text not null default '{}',
    due_at      bigint not null,
    lease_until bigint,
    attempts    bigint not null default 0,
    last_error  text,
    created_at  bigint not null,
    constraint jobs_kind_key unique (kind, job_key)
);
create index jobs_due_idx on jobs (due_at);

-- Settings the engines read.
alter table tenants add column language text not null default 'en';        -- customers' default language
alter table tenants add column max_chats bigint not null default 5;        -- default agent capacity
alter table tenants add column business_hours_id text;                     -- opening hours SLA clocks run on
alter table users add column max_chats bigint;                             -- capacity; null = the tenant's
alter table users add column last_assigned_at bigint;                      -- balancing: ties go in turn
alter table customers add column tags text not null default '[]';          -- HAS_TAG
alter table customers add column language text;                            -- SYSTEM_MESSAGE language
alter table customers add column page_url text;                            -- URL condition: the visitor's page
alter table customers add column routing_id text;                          -- the decision that routed it last
create index customers_assignee_idx on customers (tenant_id, assigned_user_id, status);

-- Conversations waiting in a QUEUE action for an agent with free capacity, served in
-- arrival order. `rule_path` locates the queuing rule (top-level id, then else-rule
-- indexes) so that its else-rules can decide when the wait ends.
create table routing_queue (
    tenant_id    text not null references tenants (id) on delete cascade,
    customer_id  text not null references customers (id) on delete cascade,
    rule_id      text not null,
    rule_path    text not null,
    target       text not null,      -- JSON QueueTarget
    agent_state  text not null,      -- AVAILABLE | ONLINE | ANY
    channel      text not null,      -- CHAT | CALL
    enqueued_at  bigint not null,
    deadline_at  bigint not null,
    decision_id  text not null,
    primary key (tenant_id, customer_id)
);
create index routing_queue_order_idx on routing_queue (tenant_id, enqueued_at);

-- The match log: every routing decision, what was tried and what came of it.
create table routing_decisions (
    id           text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    customer_id  text not null,
    at           bigint not null,
    reason       text not null,      -- NEW | REOPENED | NO_ANSWER | AGENT_OFFLINE | QUEUE_TIMEOUT | MANUAL
    rule_id      text,               -- the top-level rule that matched
    rule_path    text,               -- names from it down to the matching else-rule
    tried        text not null,      -- JSON list of the rules tried and whether each matched
    actions      text not null,      -- JSON list of the actions taken
    result       text not null,      -- ASSIGNED | QUEUED | MESSAGED | NO_MATCH | NO_AGENT
    user_id      text                -- the agent it went to, if any
);
create index routing_decisions_customer_idx on routing_decisions (tenant_id, customer_id, at);
create index routing_decisions_rule_idx on routing_decisions (tenant_id, rule_id, at);

-- SLA clocks: one per matching SLA rule and waiting customer message.
create table sla_clocks (
    id           text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    customer_id  text not null references customers (id) on delete cascade,
    rule_id      text not null,
    trigger_no   bigint not null,    -- 1: first response, 2: second response
    started_at   bigint not null,
    due_at       bigint not null,
    state        text not null,      -- RUNNING | MET | MISSED
    ended_at     bigint
);
create index sla_clocks_customer_idx on sla_clocks (tenant_id, customer_id, state);

-- Dashboard notifications of a user (watchdog and SLA alerts).
create table notifications (
    id          text primary key,
    tenant_id   text not null references tenants (id) on delete cascade,
    user_id     text not null references users (id) on delete cascade,
    kind        text not null,
    title       text not null,
    body        text not null,
    link        text,
    created_at  bigint not null,
    read_at     bigint
);
create index notifications_user_idx on notifications (tenant_id, user_id, created_at);

-- Watchdog alerts grouped per watchdog and window: the first event of a window is
-- sent at once, the rest are counted and sent as one summary when the window ends.
create table watchdog_windows (
    tenant_id    text not null references tenants (id) on delete cascade,
    watchdog_id  text not null,
    window_start bigint not null,
    events       bigint not null,    -- events in the window
    sent_events  bigint not null,    -- events already reported
    last_summary text not null,      -- the latest event, for the summary
    primary key (tenant_id, watchdog_id, window_start)
);
