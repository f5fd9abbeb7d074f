-- The script-error report groups a period's errors by message, file and line and
-- counts distinct visitors. With those columns in the index after the time, the
-- report reads the index alone instead of looking up every row of a long period
-- in the table, where a busy site's errors lie scattered among its other writes.
create index script_errors_report_idx on script_errors (tenant_id, at, message, file_name, line, visitor_id);
drop index script_errors_at_idx;
