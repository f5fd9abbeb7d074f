-- Bounds on what a tenant's callers (the visitor script above all) make the
-- server keep or do. `tenant_limits` holds a tenant's own bounds where the
-- platform set them (null: the default); `tenant_usage` what the tenant used
-- of each meter per window (a UTC day, a minute; unix ms of its start),
-- counted in the transaction of each write.
create table tenant_limits (
    tenant_id               text primary key references tenants (id) on delete cascade,
    recording_session_bytes bigint,
    recording_day_bytes     bigint,
    file_bytes              bigint,
    mails_per_day           bigint,
    visitors_per_minute     bigint
);
create table tenant_usage (
    tenant_id    text not null references tenants (id) on delete cascade,
    meter        text not null,
    window_start bigint not null,
    amount       bigint not null default 0,
    primary key (tenant_id, meter, window_start)
);
-- The bytes of events a recorded session holds, as the script sent them
-- (before compression): bounded per session. Sessions recorded before count
-- what they hold compressed, the only figure known of them.
alter table recorded_sessions add column event_bytes bigint not null default 0;
update recorded_sessions set event_bytes = recorded_bytes;
