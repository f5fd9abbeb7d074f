-- Private notes in a conversation (see core/src/conversations/notes.rs): only
-- the tenant's agents read them; never the visitor, never `message.*`
-- webhooks. `mentions` holds the ids of the users an `@` named, as a JSON
-- array. Keep in step with the other backend's migration.
create table notes (
    id           text primary key,
    tenant_id    text not null references tenants (id) on delete cascade,
    customer_id  text not null references customers (id) on delete cascade,
    author_kind  text not null,            -- user | apikey | system
    author_id    text,
    body         text not null,
    mentions     text not null default '[]',
    created_at   bigint not null
);
create index notes_customer_idx on notes (tenant_id, customer_id, created_at);
