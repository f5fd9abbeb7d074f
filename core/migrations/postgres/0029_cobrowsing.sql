-- Co-browsing that really happens (issue 25).
--
-- Universal co-browsing: a link's session runs one server-side Chromium on one
-- instance. `instance_url` says which (its internal address, for the others to
-- relay participants to), renewed in `instance_seen_at` while the browser runs;
-- a stale claim may be taken over. A session that ended stays ended: its links
-- then say so, and nothing of its browser is kept.
alter table cobrowse_sessions add column started_at bigint;
alter table cobrowse_sessions add column ended_at bigint;
alter table cobrowse_sessions add column end_reason text;
alter table cobrowse_sessions add column instance_url text;
alter table cobrowse_sessions add column instance_seen_at bigint;

-- Script co-browsing: an agent browses with a visitor on the visitor's own
-- page, seen through the live view of its recorded session. One row per
-- request; `state` is REQUESTED, ACTIVE, DECLINED or ENDED, `control` whether
-- the visitor lets the agent click and type now, `handovers` how often the
-- visitor granted control.
create table script_cobrowses (
    id              text primary key,
    tenant_id       text not null references tenants (id) on delete cascade,
    session_id      text not null,
    agent_user_id   text references users (id) on delete set null,
    agent_name      text not null,
    state           text not null,
    control         boolean not null default false,
    handovers       bigint not null default 0,
    requested_at    bigint not null,
    accepted_at     bigint,
    ended_at        bigint,
    foreign key (tenant_id, session_id) references recorded_sessions (tenant_id, id) on delete cascade
);
create index script_cobrowses_session_idx on script_cobrowses (tenant_id, session_id, requested_at);
