-- A watchdog window is its start and its length (core/src/engine/watchdogs):
-- after an admin changes the grouping period, a window of the new length may
-- start where an old one started, and it is a new window, alerted at once and
-- ended on its own. Keep in step with migrations/sqlite.
alter table watchdog_windows add column window_ms bigint;  -- the window's length
-- An open window's length is when its end job is due, less its start (a job
-- not yet tried is where it was scheduled); else the tenant's period.
update watchdog_windows w
   set window_ms = coalesce(
           (select j.due_at - w.window_start from jobs j
             where j.kind = 'watchdog.summary' and j.attempts = 0
               and j.job_key = w.tenant_id || ':' || w.watchdog_id || ':' || w.window_start),
           (select t.watchdog_window_seconds * 1000 from tenants t where t.id = w.tenant_id),
           300000);
alter table watchdog_windows alter column window_ms set not null;
alter table watchdog_windows drop constraint watchdog_windows_pkey;
alter table watchdog_windows add primary key (tenant_id, watchdog_id, window_start, window_ms);

-- The end jobs of open windows name the window's length, in their key and payload.
update jobs j
   set job_key = j.job_key || ':' || w.window_ms,
       payload = jsonb_set(j.payload::jsonb, '{windowMs}', to_jsonb(w.window_ms))::text
  from watchdog_windows w
 where j.kind = 'watchdog.summary'
   and j.job_key = w.tenant_id || ':' || w.watchdog_id || ':' || w.window_start;
