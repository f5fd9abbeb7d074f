-- Agent time reports read every interval of a state overlapping a period. With
-- the start and the user in the index, that read never touches the table rows,
-- which lie scattered among a long history's other writes.
create index presence_intervals_range_idx on presence_intervals (tenant_id, state, ended_at, started_at, user_id);
drop index presence_intervals_end_idx;
