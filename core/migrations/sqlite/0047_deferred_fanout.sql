-- Endpoints that fail are not given a delivery row per event while they fail
-- (`webhooks/deliveries/catch_up.rs`): the fan-out passes them over and keeps,
-- per endpoint, the position in the event stream up to which its rows were
-- written (`fanout_mark`, null while the endpoint takes part in the fan-out).
-- Once the endpoint may be tried again it catches up from there, a batch at a
-- time. An endpoint disabled while it was behind skips the events of the time
-- it was disabled: `fanout_gap_from` and `fanout_gap_to` bound them. Positions
-- are SQLite's rowid (see 0046). Keep in step with the other backend's file.
alter table webhook_endpoints add column fanout_mark bigint;
alter table webhook_endpoints add column fanout_gap_from bigint;
alter table webhook_endpoints add column fanout_gap_to bigint;
-- Events stored for the endpoints they name (a test event, an alert to its
-- receivers) are not part of the stream a catch-up reads.
alter table events add column directed boolean not null default false;
create index webhook_endpoints_behind_idx on webhook_endpoints (fanout_mark) where fanout_mark is not null;
-- A catch-up reads one tenant's events in stream order: SQLite appends the
-- rowid to every index key, so this index holds them as (tenant, rowid).
create index events_stream_idx on events (tenant_id);
