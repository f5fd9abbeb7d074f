-- Replies by mail to visitors who have left (see
-- core/src/conversations/replies_by_mail.rs). `reply_to` is the address a
-- visitor gave without it becoming the customer's `email` (the offline form's);
-- `replies_mailed_until` the creation time of the newest reply mailed, so each
-- goes by mail once. The workspace says after how many minutes an unseen reply
-- goes by mail (0: never). A continue link carries a token whose digest is
-- kept here: it opens that one conversation until it expires. Keep in step
-- with the other backend's migration.
alter table customers add column reply_to text;
alter table customers add column replies_mailed_until bigint;
alter table tenants add column reply_by_mail_minutes bigint not null default 5;

create table continue_links (
    id           text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    customer_id  text not null references customers (id) on delete cascade,
    token_digest text not null unique,
    created_at   bigint not null,
    expires_at   bigint not null
);
create index continue_links_customer_idx on continue_links (tenant_id, customer_id);
