-- Fan-out after commit (issue 37): a write stores its event once, marked
-- `fanout_pending`; the delivery worker turns it into one delivery per
-- subscribed endpoint after the commit (`webhooks/deliveries/fanout.rs`), so
-- a write's cost no longer grows with the tenant's endpoints. Events written
-- before this migration were fanned out already. Keep in step with the other
-- backend's file.
alter table events add column fanout_pending boolean not null default false;
create index events_fanout_idx on events (created_at, id) where fanout_pending;
