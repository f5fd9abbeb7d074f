-- Who a visitor is, and how sure Rapport is of it.
--
-- A workspace may sign its visitors' identities: its site computes an HMAC of
-- the visitor's `externalId` and e-mail with `identity_secret`, and the widget
-- sends it along. `identity_required` refuses identities without one.
alter table tenants add column identity_secret text;
alter table tenants add column identity_required boolean not null default false;

-- A signed identity is the customer's own `external_id`/`email`, and
-- `identity_verified` says so. An unsigned one is only a claim, kept apart so
-- that it never takes over a customer an integration addresses by its id.
alter table customers add column identity_verified boolean not null default false;
alter table customers add column claimed_email text;
alter table customers add column claimed_external_id text;
-- Tags the visitor's page set (the script's `tag`), apart from those agents
-- and integrations set: anyone can set them, so rules say which they trust.
alter table customers add column page_tags text not null default '[]';

-- A verified visitor continues its conversation on any device, so a customer
-- may have several visitor tokens (sha256 of each).
create table visitor_tokens (
    token_hash  text primary key,
    tenant_id   text not null references tenants (id) on delete cascade,
    customer_id text not null references customers (id) on delete cascade,
    created_at  bigint not null
);
create index visitor_tokens_customer_idx on visitor_tokens (customer_id);
insert into visitor_tokens (token_hash, tenant_id, customer_id, created_at)
    select visitor_token_hash, tenant_id, id, created_at from customers where visitor_token_hash is not null;
drop index customers_visitor_token_key;
alter table customers drop column visitor_token_hash;
