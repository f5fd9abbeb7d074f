-- The script-error list groups a period's errors by message, file and line and
-- counts each group's distinct visitors. Read through this index, the errors
-- arrive already in that order, so SQLite groups and counts them without sorting
-- them first (for a year of a busy site: 160 ms down to 45 ms). The time index of
-- 0011 still serves short periods and the per-day counts.
create index script_errors_signature_idx on script_errors (tenant_id, message, file_name, line, visitor_id, at);
