-- Three more bounds per tenant (see core/src/limits.rs): the public event
-- streams its pages hold open on one instance, the co-browsing sessions it runs
-- at once, and the people in one of them. Null: the default. Keep in step with
-- migrations/postgres.
alter table tenant_limits add column open_streams bigint;
alter table tenant_limits add column cobrowse_sessions bigint;
alter table tenant_limits add column cobrowse_participants bigint;
