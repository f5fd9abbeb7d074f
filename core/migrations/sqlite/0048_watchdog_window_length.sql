-- A watchdog window is its start and its length (core/src/engine/watchdogs):
-- after an admin changes the grouping period, a window of the new length may
-- start where an old one started, and it is a new window, alerted at once and
-- ended on its own. SQLite cannot change a primary key, so the table is
-- rebuilt. Keep in step with migrations/postgres.

-- Watchdog alerts grouped per watchdog and window: the first event of a window is
-- sent at once, the rest are counted and sent as one summary when the window ends.
create table watchdog_windows_by_length (
    tenant_id    text not null references tenants (id) on delete cascade,
    watchdog_id  text not null,
    window_start bigint not null,
    window_ms    bigint not null,    -- the window's length
    events       bigint not null,    -- events in the window
    sent_events  bigint not null,    -- events already reported
    last_summary text not null,      -- the latest event, for the summary
    last_link    text,               -- its link
    primary key (tenant_id, watchdog_id, window_start, window_ms)
);
-- An open window's length is when its end job is due, less its start (a job
-- not yet tried is where it was scheduled); else the tenant's period.
insert into watchdog_windows_by_length
    (tenant_id, watchdog_id, window_start, window_ms, events, sent_events, last_summary, last_link)
select w.tenant_id, w.watchdog_id, w.window_start,
       coalesce(
           (select j.due_at - w.window_start from jobs j
             where j.kind = 'watchdog.summary' and j.attempts = 0
               and j.job_key = w.tenant_id || ':' || w.watchdog_id || ':' || w.window_start),
           (select t.watchdog_window_seconds * 1000 from tenants t where t.id = w.tenant_id),
           300000),
       w.events, w.sent_events, w.last_summary, w.last_link
  from watchdog_windows w;
drop table watchdog_windows;
alter table watchdog_windows_by_length rename to watchdog_windows;

-- The end jobs of open windows name the window's length, in their key and payload.
update jobs
   set job_key = job_key || ':' || (
           select w.window_ms from watchdog_windows w
            where jobs.job_key = w.tenant_id || ':' || w.watchdog_id || ':' || w.window_start),
       payload = json_set(payload, '$.windowMs', (
           select w.window_ms from watchdog_windows w
            where jobs.job_key = w.tenant_id || ':' || w.watchdog_id || ':' || w.window_start))
 where kind = 'watchdog.summary'
   and exists (select 1 from watchdog_windows w
                where jobs.job_key = w.tenant_id || ':' || w.watchdog_id || ':' || w.window_start);
