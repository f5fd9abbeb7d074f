-- The fan-out's order is the database's, not the writing instance's clock
-- (`webhooks/deliveries/fanout.rs`): on PostgreSQL a number from one sequence,
-- taken when the event is inserted: an event written after another committed
-- has a higher number, whichever instance wrote either. (Writes in flight at
-- the same moment have no order between them, on one instance or several.)
-- Existing events are numbered as they are stored. Keep in step with the
-- other backend's file.
alter table events add column seq bigint generated always as identity;
drop index events_fanout_idx;
create index events_fanout_idx on events (seq) where fanout_pending;
