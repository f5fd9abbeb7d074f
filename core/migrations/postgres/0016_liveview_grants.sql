-- A live-view link no longer signs its user in. Opening it (once) turns it into a
-- grant: a second random token, kept only as its digest, that reads the live view
-- of this one session and nothing else, and lapses when idle and at a hard limit.
alter table liveview_tokens add column grant_hash text;
alter table liveview_tokens add column grant_idle_until bigint;
alter table liveview_tokens add column grant_until bigint;
create unique index liveview_tokens_grant_idx on liveview_tokens (grant_hash);
