-- Script errors per local day (see core/src/reports/errors.rs). Keep in step with
-- migrations/postgres.
--
-- Each error adds one to its day's `SCRIPT_ERROR` row in report_day_rollups
-- (samples = errors, total = distinct visitors), and marks its visitor in
-- error_visitor_days once per day, so a daily script-error report reads one row
-- per day instead of counting a year of errors and their distinct visitors.
create table error_visitor_days (
    tenant_id  text not null references tenants (id) on delete cascade,
    zone       text not null,
    day_start  bigint not null,        -- the instant the local day starts, unix ms
    visitor_id text not null,
    primary key (tenant_id, zone, day_start, visitor_id)
) without rowid;

-- Existing tenants have no such rows for the days so far: the error rows are
-- complete from a day on (the other day rows keep their own start). Reports read
-- the days before from the errors themselves.
alter table day_rollup_zones add column errors_from bigint not null default 0;
update day_rollup_zones set errors_from = cast((julianday('now') - 2440587.5) * 86400000 as integer) + 86400000;
