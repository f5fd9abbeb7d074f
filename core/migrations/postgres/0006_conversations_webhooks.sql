-- Conversations and messages (spec 2.2, 2.3, 3), the event outbox and webhook
-- delivery (spec 6). Keep in step with migrations/sqlite.

-- The public key the visitor widget and ingestion endpoints present.
alter table tenants add column widget_key text;
update tenants set widget_key = 'wk_' || md5(random()::text || clock_timestamp()::text || id);
create unique index tenants_widget_key_key on tenants (widget_key);

-- The conversation lives on the customer (spec 3).
alter table customers add column status text not null default 'UNREAD';  -- UNREAD | DONE | UNRESOLVED
alter table customers add column status_changed_at bigint;
alter table customers add column last_message_at bigint;
alter table customers add column visitor_token_hash text;                -- sha256 of the widget visitor token
create index customers_status_idx on customers (tenant_id, status, last_message_at);
create unique index customers_visitor_token_key on customers (visitor_token_hash);

create table messages (
    id           text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    customer_id  text not null references customers (id) on delete cascade,
    direction    text not null,            -- INBOUND (from the customer) | OUTBOUND
    type         text not null,            -- MESSAGE | AUDIO | VIDEO | FILE | CARD
    message      text,
    url          text,
    button_text  text,
    button_link  text,
    channel      text not null,            -- WIDGET | API | DASHBOARD
    sender_kind  text not null,            -- customer | user | apikey | system
    sender_id    text,
    created_at   bigint not null,
    delivered_at bigint                    -- outbound: when the customer's widget fetched it
);
create index messages_customer_idx on messages (tenant_id, customer_id, created_at);

create table webhook_endpoints (
    id                     text primary key,
    tenant_id              text not null references tenants (id) on delete cascade,
    url                    text not null,
    description            text,
    event_types            text not null default '[]',   -- JSON array; empty = every event
    enabled                boolean not null default true,
    disabled_reason        text,
    secret                 text not null,                -- whsec_…; an HMAC key must be kept to sign
    previous_secret        text,
    previous_secret_until  bigint,
    failing_since          bigint,
    created_at             bigint not null,
    updated_at             bigint not null
);
create index webhook_endpoints_tenant_idx on webhook_endpoints (tenant_id, created_at);

-- The outbox: written in the same transaction as the change it reports.
create table events (
    id           text primary key,         -- msg_…, sent as webhook-id
    tenant_id    text not null references tenants (id) on delete cascade,
    type         text not null,
    customer_id  text,
    actor        text not null,            -- kind:id
    payload      text not null,            -- the exact bytes delivered
    created_at   bigint not null
);
create index events_tenant_idx on events (tenant_id, created_at);

create table webhook_deliveries (
    seq              bigint generated always as identity primary key,
    id               text not null,
    tenant_id        text not null references tenants (id) on delete cascade,
    endpoint_id      text not null references webhook_endpoints (id) on delete cascade,
    event_id         text not null references events (id) on delete cascade,
    ordering_key     text not null,        -- customer id: one endpoint gets one customer's events in order
    state            text not null,        -- pending | delivering | succeeded | failed
    attempts         bigint  not null default 0,
    next_attempt_at  bigint not null,
    lease_until      bigint,
    last_status      bigint ,
    last_error       text,
    created_at       bigint not null,
    completed_at     bigint,
    constraint webhook_deliveries_id_key unique (id)
);
create index webhook_deliveries_due_idx on webhook_deliveries (state, next_attempt_at);
create index webhook_deliveries_order_idx on webhook_deliveries (endpoint_id, ordering_key, seq);

create table webhook_attempts (
    id                text primary key,
    delivery_id       text not null references webhook_deliveries (id) on delete cascade,
    endpoint_id       text not null,
    tenant_id         text not null,
    attempt           bigint  not null,
    started_at        bigint not null,
    duration_ms       bigint  not null,
    status_code       bigint ,
    error             text,
    response_excerpt  text
);
create index webhook_attempts_endpoint_idx on webhook_attempts (endpoint_id, started_at);
create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, started_at);
