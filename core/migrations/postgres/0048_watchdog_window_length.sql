-- A watchdog window is its start and its length (core/src/engine/watchdogs):
-- after an admin changes the grouping period, a window of the new length may
-- start where an old one started, and it is a new window, alerted at once and
-- ended on its own. Windows open now take the tenant's current period. Keep
-- in step with migrations/sqlite.
alter table watchdog_windows add column window_ms bigint;
update watchdog_windows w set window_ms = t.watchdog_window_seconds * 1000
  from tenants t where t.id = w.tenant_id;
alter table watchdog_windows alter column window_ms set not null;
alter table watchdog_windows drop constraint watchdog_windows_pkey;
alter table watchdog_windows add primary key (tenant_id, watchdog_id, window_start, window_ms);
