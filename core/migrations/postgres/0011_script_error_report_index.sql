-- SQLite's migration 0011 widens the script-error time index with message, file,
-- line and visitor, so the report reads the index alone. PostgreSQL keeps
-- (tenant_id, at): a B-tree entry must stay under about 2.7 kB, and a message may
-- hold 1,000 characters of up to 4 bytes each. Kept as a step so both backends'
-- migration histories stay in step.
select 1;
