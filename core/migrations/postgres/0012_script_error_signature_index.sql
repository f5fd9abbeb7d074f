-- SQLite's migration 0012 adds an index ordered by message, file, line and
-- visitor for the script-error list. PostgreSQL cannot hold a 1,000-character
-- message in a B-tree entry (see 0011), so it keeps its time index and groups
-- with a hash aggregate. Kept as a step so both migration histories stay in step.
select 1;
