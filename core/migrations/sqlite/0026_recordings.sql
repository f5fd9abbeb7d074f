-- Session recording by the visitor script: what each workspace records, and the
-- recorded events, stored append-only per session in compressed chunks.

-- Recording is on by default, with every input masked; consent may be required.
alter table tenants add column recording_enabled boolean not null default true;
alter table tenants add column recording_consent_required boolean not null default false;
alter table tenants add column recording_mask_selector text;    -- CSS selector of text to mask
alter table tenants add column recording_block_selector text;   -- CSS selector of elements left out
alter table tenants add column recording_retention_days bigint not null default 30;

-- A session the script records: only the holder of its write token appends.
alter table recorded_sessions add column write_token_hash text;
alter table recorded_sessions add column customer_id text;      -- the chat visitor, once known
alter table recorded_sessions add column recorded_bytes bigint not null default 0;
alter table recorded_sessions add column watched_until bigint;  -- a live viewer is on it until then
create index recorded_sessions_customer_idx on recorded_sessions (tenant_id, customer_id, started_at);

-- One batch of rrweb events, as the gzip of their JSON array; a retried batch
-- (same seq) is stored once.
create table recording_chunks (
    tenant_id    text not null,
    session_id   text not null,
    seq          bigint not null,
    first_at     bigint not null,
    last_at      bigint not null,
    event_count  bigint not null,
    data         blob not null,
    primary key (tenant_id, session_id, seq),
    foreign key (tenant_id, session_id) references recorded_sessions (tenant_id, id) on delete cascade
);
