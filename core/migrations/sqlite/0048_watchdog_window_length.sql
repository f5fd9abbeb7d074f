-- A watchdog window is its start and its length (core/src/engine/watchdogs):
-- after an admin changes the grouping period, a window of the new length may
-- start where an old one started, and it is a new window, alerted at once and
-- ended on its own. Windows open now take the tenant's current period. SQLite
-- cannot change a primary key, so the table is rebuilt. Keep in step with
-- migrations/postgres.
create table watchdog_windows_by_length (
    tenant_id    text not null references tenants (id) on delete cascade,
    watchdog_id  text not null,
    window_start bigint not null,
    window_ms    bigint not null,
    events       bigint not null,    -- events in the window
    sent_events  bigint not null,    -- events already reported
    last_summary text not null,      -- the latest event, for the summary
    last_link    text,               -- its link
    primary key (tenant_id, watchdog_id, window_start, window_ms)
);
insert into watchdog_windows_by_length
    (tenant_id, watchdog_id, window_start, window_ms, events, sent_events, last_summary, last_link)
select w.tenant_id, w.watchdog_id, w.window_start, t.watchdog_window_seconds * 1000,
       w.events, w.sent_events, w.last_summary, w.last_link
  from watchdog_windows w join tenants t on t.id = w.tenant_id;
drop table watchdog_windows;
alter table watchdog_windows_by_length rename to watchdog_windows;
