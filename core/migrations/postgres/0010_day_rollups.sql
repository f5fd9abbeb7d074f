-- Daily rollups in the tenant's time zone (see core/src/reports/days.rs). Keep in
-- step with migrations/sqlite.
--
-- Every hourly rollup row is also added to a row for its local day, so a report
-- over a long period reads one row per day and group. The zone and the instant
-- from which the day rows are complete are kept per tenant, as the unique-visitor
-- day counts already were: that table now serves all day rollups.
alter table visitor_day_zones rename to day_rollup_zones;

-- Existing tenants have no day rows yet: they are complete from a day on. Reports
-- read the days before from the hourly rows.
update day_rollup_zones
set complete_from = greatest(complete_from, cast(extract(epoch from now()) * 1000 as bigint) + 86400000);

create table report_day_rollups (
    tenant_id   text not null references tenants (id) on delete cascade,
    zone        text not null,             -- the IANA zone the days are cut in
    kind        text not null,
    group_kind  text not null,             -- '', 'AGENT' or 'DIM' (visitors are counted in visitor_days)
    day         bigint not null,           -- the instant the local day starts, unix ms
    group_key   text not null,
    total       bigint not null,
    samples     bigint not null,
    primary key (tenant_id, zone, kind, group_kind, day, group_key)
);

-- The distinct-visitor day counts move here from report_rollups.
insert into report_day_rollups (tenant_id, zone, kind, group_kind, day, group_key, total, samples)
select tenant_id, group_key, kind, '', hour, '', total, samples
from report_rollups where kind = 'VISITOR_DAY' and group_kind = 'ZONE';
delete from report_rollups where kind = 'VISITOR_DAY';

create table resource_day_rollups (
    tenant_id        text not null references tenants (id) on delete cascade,
    zone             text not null,
    day              bigint not null,      -- the instant the local day starts, unix ms
    name             text not null,
    type             text not null,
    status_code      integer not null,     -- -1 when unknown
    loads            bigint not null,
    duration_sum     bigint not null,
    duration_max     bigint not null,
    transfer_sum     bigint not null,
    transfer_samples bigint not null,
    errors           bigint not null,
    primary key (tenant_id, zone, day, name, type, status_code)
);
