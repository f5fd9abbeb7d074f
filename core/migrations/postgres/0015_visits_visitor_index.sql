-- Period totals of unique visitors count distinct visitors straight from the
-- visits of the period (see core/src/reports/visitors.rs). With the visitor in
-- the index, that count reads the index alone. It serves every query the old
-- (tenant_id, started_at) index served. Keep in step with the other backend.
create index visits_started_visitor_idx on visits (tenant_id, started_at, visitor_id);
drop index visits_started_idx;
