-- The fan-out's order is the database's, not the writing instance's clock
-- (`webhooks/deliveries/fanout.rs`): on SQLite the order events were inserted
-- in, their rowid, which the one writer hands out in commit order. The
-- partial index holds only the events that wait, keyed so that they come in
-- rowid order (SQLite appends the rowid to every index key), which the query
-- reads with the identical term `fanout_pending = 1`. Keep in step with the
-- other backend's file.
drop index events_fanout_idx;
create index events_fanout_idx on events (fanout_pending) where fanout_pending = 1;
