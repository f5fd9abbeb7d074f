-- Hourly rollups of page resources, kept in step with visit_resources, so the
-- resource report over a long period reads hours, not loads. Kept per name, type
-- and status code (-1 when unknown): the dimensions the report can group by whose
-- values stay few on a real site.
create table resource_rollups (
    tenant_id        text not null references tenants (id) on delete cascade,
    hour             bigint not null,       -- start of the UTC hour, unix ms
    name             text not null,
    type             text not null,
    status_code      integer not null,
    loads            bigint not null,
    duration_sum     bigint not null,
    duration_max     bigint not null,
    transfer_sum     bigint not null,
    transfer_samples bigint not null,
    errors           bigint not null,
    primary key (tenant_id, hour, name, type, status_code)
);

insert into resource_rollups
    (tenant_id, hour, name, type, status_code, loads, duration_sum, duration_max, transfer_sum, transfer_samples, errors)
select tenant_id, (at / 3600000) * 3600000, name, type, coalesce(status_code, -1),
       count(*), sum(duration_ms), max(duration_ms), coalesce(sum(transfer_bytes), 0), count(transfer_bytes),
       sum(case when status_code >= 400 then 1 else 0 end)
from visit_resources
group by 1, 2, 3, 4, 5;

-- Visitors seen per local day in the tenant's zone (see reports::visitors), and
-- from when those day counts are complete.
create table visitor_days (
    tenant_id  text not null references tenants (id) on delete cascade,
    zone       text not null,
    day_start  bigint not null,        -- the instant the local day starts, unix ms
    visitor_id text not null,
    primary key (tenant_id, zone, day_start, visitor_id)
);

create table visitor_day_zones (
    tenant_id     text primary key references tenants (id) on delete cascade,
    zone          text not null,
    complete_from bigint not null
);

-- Existing tenants have no day counts yet: they are complete from a day on.
insert into visitor_day_zones (tenant_id, zone, complete_from)
select id, timezone, cast(extract(epoch from now()) * 1000 as bigint) + 86400000 from tenants;
