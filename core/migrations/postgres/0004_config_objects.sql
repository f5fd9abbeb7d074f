-- Tenant settings objects (opening hours, system messages, watchdogs, routing and SLA
-- rules): each a validated JSON document of its kind, read and written whole.

create table config_objects (
    tenant_id   text not null references tenants (id) on delete cascade,
    kind        text not null,
    id          text not null,
    name        text not null,
    body        text not null,
    created_at  bigint not null,
    updated_at  bigint not null,
    primary key (tenant_id, kind, id)
);
create index config_objects_name_idx on config_objects (tenant_id, kind, name);
