-- Appointments (spec 2.11), co-browsing and live-view links (2.12, 2.13) and
-- recorded visitor sessions (2.14).

create table appointments (
    id                 text primary key,
    tenant_id          text not null references tenants (id) on delete cascade,
    title              text not null,
    description        text,
    duration_minutes   integer not null,
    starts_at          bigint not null,
    timezone_id        text not null,
    record             boolean not null,
    owner_user_id      text references users (id) on delete set null,
    password_hash      text,
    attendees          text not null,            -- JSON array of e-mails
    send_invite_email  boolean not null,
    customer_id        text references customers (id) on delete set null,
    valid              boolean not null,
    valid_type         text not null,            -- HOURS | APPOINTMENT
    valid_after        integer,
    valid_before       integer,
    custom_properties  text not null,            -- JSON object
    permissions        text not null,            -- JSON object
    join_token         text not null,
    created_at         bigint not null,
    updated_at         bigint not null,
    constraint appointments_join_token_key unique (join_token)
);
create index appointments_tenant_start_idx on appointments (tenant_id, starts_at);

create table cobrowse_sessions (
    id                 text primary key,
    tenant_id          text not null references tenants (id) on delete cascade,
    url                text not null,
    host_user_id       text references users (id) on delete set null,
    host_token_hash    text not null,
    join_token_hash    text not null,
    created_at         bigint not null,
    expires_at         bigint not null
);
create index cobrowse_sessions_tenant_idx on cobrowse_sessions (tenant_id, created_at);

create table liveview_tokens (
    token_hash   text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    user_id      text not null references users (id) on delete cascade,
    session_id   text not null,
    language     text not null,
    created_at   bigint not null,
    expires_at   bigint not null,
    used_at      bigint
);

create table recorded_sessions (
    tenant_id    text not null references tenants (id) on delete cascade,
    id           text not null,
    visitor_id   text not null,
    external_id  text,
    entry_url    text,
    page_count   integer not null,
    started_at   bigint not null,
    ended_at     bigint,
    created_at   bigint not null,
    updated_at   bigint not null,
    primary key (tenant_id, id)
);
create index recorded_sessions_started_idx on recorded_sessions (tenant_id, started_at);

create table recorded_session_tags (
    tenant_id   text not null,
    session_id  text not null,
    tag         text not null,
    primary key (tenant_id, session_id, tag),
    foreign key (tenant_id, session_id) references recorded_sessions (tenant_id, id) on delete cascade
);
create index recorded_session_tags_tag_idx on recorded_session_tags (tenant_id, tag);
