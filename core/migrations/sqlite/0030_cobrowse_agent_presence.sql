-- A script co-browse ends when the agent who asked for it is gone: their live
-- view renews `agent_seen_at` every 10 s while connected, and an open co-browse
-- not renewed for 30 s is ended (by that live view's instance, or by the
-- recurring sweep when that instance went away too).
alter table script_cobrowses add column agent_seen_at bigint;
create index script_cobrowses_open_idx on script_cobrowses (tenant_id, session_id)
    where state in ('REQUESTED', 'ACTIVE');
