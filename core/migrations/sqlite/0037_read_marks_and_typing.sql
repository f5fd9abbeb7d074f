-- Typing and read state (see core/src/conversations/read_marks.rs and
-- typing.rs). Typing is never stored: it is a live signal. What is stored is
-- how far each side of a conversation has read, as the creation time (ms) of
-- the newest message it has seen, so a page loaded later still shows "Seen";
-- and whether agents see a visitor's draft as it is typed. Keep in step with
-- the other backend's migration.
alter table customers add column visitor_read_at bigint;
alter table customers add column agent_read_at bigint;
alter table tenants add column typing_preview boolean not null default true;
