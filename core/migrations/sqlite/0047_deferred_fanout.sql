-- Endpoints that fail are not given a delivery row per event while they fail
-- (`webhooks/deliveries/catch_up.rs`): the fan-out passes them over and keeps,
-- per endpoint, the position in the event stream up to which its rows were
-- written (`fanout_mark`, null while the endpoint takes part in the fan-out).
-- Once the endpoint may be tried again it catches up from there, a batch at a
-- time. Positions are SQLite's rowid (see 0046). Keep in step with the other
-- backend's file.
alter table webhook_endpoints add column fanout_mark bigint;
-- An endpoint disabled while it was behind skips the events of the time it
-- was disabled: one row per time, the events after `gap_from` up to `gap_to`
-- (null while it is still disabled). A catch-up deletes the gaps it passes.
create table webhook_fanout_gaps (
    endpoint_id text not null references webhook_endpoints (id) on delete cascade,
    gap_from    bigint not null,
    gap_to      bigint,
    primary key (endpoint_id, gap_from)
);
-- Events stored for the endpoints they name (a test event, an alert to its
-- receivers) are not part of the stream a catch-up reads.
alter table events add column directed boolean not null default false;
create index webhook_endpoints_behind_idx on webhook_endpoints (fanout_mark) where fanout_mark is not null;
-- A catch-up reads one tenant's events in stream order: SQLite appends the
-- rowid to every index key, so this index holds them as (tenant, rowid).
create index events_stream_idx on events (tenant_id);
