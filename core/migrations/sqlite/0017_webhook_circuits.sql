-- Webhook work whose cost does not grow with the backlog (see
-- core/src/webhooks/deliveries.rs). Keep in step with the other backend.
--
-- A circuit per endpoint: an endpoint whose attempt failed is held as a whole
-- until `next_attempt_at`, and its queued deliveries are left alone meanwhile.
-- `failures` counts the failed attempts since the last success (it picks the
-- wait from the retry schedule, and while it is above 0 a reopened endpoint gets
-- one probe at a time); `last_failure_at` tells a fresh failure from one of an
-- attempt that was already under way when the circuit opened. A claim also sets
-- `next_attempt_at` to its own time, so due endpoints are served in turn.
alter table webhook_endpoints add column next_attempt_at bigint not null default 0;
alter table webhook_endpoints add column failures bigint not null default 0;
alter table webhook_endpoints add column last_failure_at bigint;
create index webhook_endpoints_due_idx on webhook_endpoints (next_attempt_at) where enabled;

-- Every claim path reads a partial index over the unfinished rows only, so the
-- succeeded and failed history, and the queues of held endpoints, are never scanned.
drop index webhook_deliveries_due_idx;
drop index webhook_deliveries_order_idx;
-- An endpoint's queue, oldest first (the claim reads a bounded window of it). The
-- claim orders by `created_at, seq`, an order only this index gives, so neither
-- planner is tempted to walk the primary key or the log instead.
create index webhook_deliveries_queue_idx on webhook_deliveries (endpoint_id, created_at, seq)
    where state = 'pending';
-- Whether an endpoint has a due delivery, and when its next one is due (also
-- how long the worker may sleep).
create index webhook_deliveries_endpoint_due_idx on webhook_deliveries (endpoint_id, next_attempt_at)
    where state = 'pending';
-- One customer's events in order: is an older one of the same key unfinished?
create index webhook_deliveries_key_idx on webhook_deliveries (endpoint_id, ordering_key, seq)
    where state in ('pending', 'delivering');
-- Claims whose instance died, once their lease ends.
create index webhook_deliveries_lease_idx on webhook_deliveries (lease_until) where state = 'delivering';
-- The delivery log, newest first; deleting an endpoint finds its rows here.
create index webhook_deliveries_log_idx on webhook_deliveries (endpoint_id, seq);
-- Retention: finished deliveries by age, and an event's remaining deliveries.
create index webhook_deliveries_done_idx on webhook_deliveries (completed_at)
    where state in ('succeeded', 'failed');
create index webhook_deliveries_event_idx on webhook_deliveries (event_id);
create index events_created_idx on events (created_at);
