-- Report facts and their rollups (issue: reports). Keep in step with migrations/postgres.
--
-- Facts are append-only: a row is written once, in the transaction of what it
-- records, and never changed. Rollups are hourly sums of the facts, written in the
-- same transaction, so a report reads one row per hour and group instead of every
-- fact (see core/src/reports/mod.rs).

-- Where a conversation stands for response-time facts.
alter table customers add column conversation_started_at bigint;  -- created, or reopened (DONE -> UNREAD)
alter table customers add column first_reply_at bigint;           -- first agent reply since then
alter table customers add column awaiting_reply_since bigint;     -- oldest unanswered customer message
update customers set conversation_started_at = created_at;

-- Agent presence: LOGGED_IN, ONLINE or AWAY, as intervals. An open interval has no
-- end; the heartbeat moves last_seen_at, and a stale one is closed at last_seen_at.
create table presence_intervals (
    id           text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    user_id      text not null,
    state        text not null,
    started_at   bigint not null,
    ended_at     bigint,
    last_seen_at bigint not null
);
create index presence_intervals_end_idx on presence_intervals (tenant_id, state, ended_at);
create index presence_intervals_open_idx on presence_intervals (tenant_id, user_id, ended_at);
create index presence_intervals_stale_idx on presence_intervals (last_seen_at) where ended_at is null;

-- Counted and timed facts: conversations, messages, responses, rule matches and SLA
-- outcomes, sessions, co-browse sessions and conferences.
create table report_facts (
    id          integer primary key,
    tenant_id   text not null references tenants (id) on delete cascade,
    kind        text not null,
    at          bigint not null,
    value       bigint not null,       -- 1 for a count; milliseconds for a duration
    agent_id    text,                  -- the agent the fact belongs to, if any
    dim         text,                  -- the kind's second dimension (message type, rule id, reason, status)
    subject     text,                  -- what it is about (customer, session, conference)
    tags        text,                  -- '|a|b|' for tag filters
    dedupe_key  text,                  -- facts sent by clients are recorded once
    constraint report_facts_dedupe_key unique (tenant_id, kind, dedupe_key)
);
create index report_facts_kind_at_idx on report_facts (tenant_id, kind, at);

-- Visits, the page resources they loaded and the script errors they hit, as sent by
-- the visitor script.
create table visits (
    tenant_id    text not null references tenants (id) on delete cascade,
    id           text not null,
    visitor_id   text not null,
    external_id  text,
    url          text not null,
    path         text not null,
    started_at   bigint not null,
    duration_ms  bigint not null,
    page_views   bigint not null,
    tags         text,
    primary key (tenant_id, id)
);
create index visits_started_idx on visits (tenant_id, started_at);

create table visit_resources (
    tenant_id      text not null references tenants (id) on delete cascade,
    id             text not null,
    at             bigint not null,
    visit_id       text,
    session_id     text,
    visitor_id     text,
    external_id    text,
    name           text not null,
    type           text not null,
    url            text not null,
    path           text not null,
    status_code    integer,
    duration_ms    bigint not null,
    transfer_bytes bigint,
    tags           text,
    primary key (tenant_id, id)
);
create index visit_resources_at_idx on visit_resources (tenant_id, at);

create table script_errors (
    tenant_id    text not null references tenants (id) on delete cascade,
    id           text not null,
    at           bigint not null,
    visit_id     text,
    session_id   text,
    visitor_id   text,
    external_id  text,
    url          text not null,
    path         text not null,
    file_name    text,
    line         integer,
    col          integer,
    message      text not null,
    tags         text,
    primary key (tenant_id, id)
);
create index script_errors_at_idx on script_errors (tenant_id, at);

-- Hourly sums per fact kind and group. group_kind '' is the total; 'AGENT', 'DIM'
-- and 'VISITOR' hold one row per agent, second dimension or visitor.
create table report_rollups (
    tenant_id   text not null references tenants (id) on delete cascade,
    kind        text not null,
    group_kind  text not null,
    group_key   text not null,
    hour        bigint not null,       -- start of the UTC hour, unix ms
    total       bigint not null,
    samples     bigint not null,
    primary key (tenant_id, kind, group_kind, hour, group_key)
) without rowid;
