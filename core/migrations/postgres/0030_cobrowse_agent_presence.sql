-- A script co-browse ends when the agent who asked for it is gone: their live
-- view renews `agent_seen_at` every 10 s while connected, and an open co-browse
-- not renewed for 30 s is ended (by that live view's instance, or by the
-- recurring sweep when that instance went away too). Co-browses open now get
-- the same grace from now on.
alter table script_cobrowses add column agent_seen_at bigint;
update script_cobrowses set agent_seen_at = cast(extract(epoch from now()) * 1000 as bigint)
    where state in ('REQUESTED', 'ACTIVE');
-- At most one open co-browse per session: two asked at the same moment cannot
-- both go on, and the ends find the one there is. Of two open before, the
-- older ends.
update script_cobrowses set state = 'ENDED', control = false, ended_at = requested_at
    where state in ('REQUESTED', 'ACTIVE') and exists (
        select 1 from script_cobrowses newer
        where newer.tenant_id = script_cobrowses.tenant_id
          and newer.session_id = script_cobrowses.session_id
          and newer.state in ('REQUESTED', 'ACTIVE')
          and (newer.requested_at > script_cobrowses.requested_at
               or (newer.requested_at = script_cobrowses.requested_at and newer.id > script_cobrowses.id)));
create unique index script_cobrowses_open_idx on script_cobrowses (tenant_id, session_id)
    where state in ('REQUESTED', 'ACTIVE');
