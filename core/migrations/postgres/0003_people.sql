-- Teams and customers (spec 2.7 and 2.1).

create table teams (
    id          text primary key,
    tenant_id   text not null references tenants (id) on delete cascade,
    name        text not null,
    tags        text not null default '[]',
    created_at  bigint not null,
    updated_at  bigint not null
);
create index teams_tenant_idx on teams (tenant_id, name);

create table team_members (
    team_id    text not null references teams (id) on delete cascade,
    user_id    text not null references users (id) on delete cascade,
    position   integer not null,
    primary key (team_id, user_id)
);
create index team_members_user_idx on team_members (user_id);

create table customers (
    id                text primary key,
    tenant_id         text not null references tenants (id) on delete cascade,
    email             text,
    first_name        text,
    last_name         text,
    gender            text,               -- female | other | male | none
    external_id       text,
    assigned_user_id  text references users (id) on delete set null,
    assigned_team_id  text references teams (id) on delete set null,
    created_at        bigint not null,
    updated_at        bigint not null,
    constraint customers_tenant_external_id_key unique (tenant_id, external_id)
);
create index customers_tenant_idx on customers (tenant_id, created_at);
