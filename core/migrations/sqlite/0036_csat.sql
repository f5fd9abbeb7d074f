-- Customer satisfaction (CSAT): after a conversation is set to DONE, the
-- visitor's widget asks for a rating, 1-5 with an optional comment, once per
-- closing (see core/src/conversations/csat.rs). `closed_at` is the customer's
-- `status_changed_at` of the DONE it answers; `user_id` the agent assigned
-- then. The workspace can switch the question off. Keep in step with
-- migrations/postgres.
alter table tenants add column csat_enabled boolean not null default true;

create table csat_ratings (
    id          text primary key,
    tenant_id   text not null references tenants (id) on delete cascade,
    customer_id text not null references customers (id) on delete cascade,
    closed_at   bigint not null,
    user_id     text,
    rating      bigint not null,          -- 1-5
    comment     text,
    created_at  bigint not null,
    constraint csat_ratings_closing_key unique (tenant_id, customer_id, closed_at)
);
