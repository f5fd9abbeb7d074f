-- Foundation: tenants, dashboard users, sessions and API keys.
-- Times are unix milliseconds (UTC). Keep in step with migrations/postgres.

create table tenants (
    id          text primary key,
    name        text not null,
    slug        text not null,
    timezone    text not null,
    created_at  bigint not null,
    constraint tenants_slug_key unique (slug)
);

create table users (
    id              text primary key,
    tenant_id       text not null references tenants (id) on delete cascade,
    email           text not null,          -- stored lower-case
    password_hash   text,                   -- argon2id PHC string; null = cannot log in
    role_id         text not null,          -- ADMIN | SUPERVISOR | AGENT
    display_name    text,
    description     text,
    external_id     text,
    tags            text not null default '[]',
    mco_enabled     boolean not null default false,
    platform_admin  boolean not null default false,
    created_at      bigint not null,
    updated_at      bigint not null,
    constraint users_tenant_email_key unique (tenant_id, email),
    constraint users_tenant_external_id_key unique (tenant_id, external_id)
);
create index users_email_idx on users (email);

create table sessions (
    token_hash    text primary key,         -- sha256 of the cookie value
    user_id       text not null references users (id) on delete cascade,
    created_at    bigint not null,
    expires_at    bigint not null,
    last_seen_at  bigint not null
);
create index sessions_user_idx on sessions (user_id);

create table api_keys (
    id            text primary key,
    kind          text not null,            -- tenant | platform
    tenant_id     text references tenants (id) on delete cascade,
    created_by    text,                     -- user id; for platform keys, the owning platform admin
    name          text not null,
    prefix        text not null,
    token_hash    text not null,
    created_at    bigint not null,
    last_used_at  bigint,
    revoked_at    bigint,
    constraint api_keys_token_hash_key unique (token_hash)
);
create index api_keys_tenant_idx on api_keys (tenant_id, created_at);
