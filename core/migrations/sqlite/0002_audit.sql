-- The user-activity (audit) log: one row per write, in the same transaction as the write.
-- tenant_id is null for installation-level actions (tenant management, platform keys).

create table audit_log (
    id             text primary key,
    tenant_id      text,
    at             bigint not null,
    actor_type     text not null,       -- user | apikey | platformkey | system
    actor_id       text not null,
    action         text not null,       -- e.g. user.create, customer.assign, session.login
    resource_type  text not null,
    resource_id    text,
    ip             text,
    request_id     text,
    details        text                 -- JSON, optional
);
create index audit_log_tenant_at_idx on audit_log (tenant_id, at);
