-- Retention reaches the engines' history: read notifications, ended SLA clocks
-- and the routing match log are deleted once older than the retention period.
-- These indexes let each batch find its oldest rows without a scan.
create index routing_decisions_at_idx on routing_decisions (at);
create index sla_clocks_ended_idx on sla_clocks (ended_at) where ended_at is not null;
create index notifications_read_idx on notifications (read_at) where read_at is not null;
