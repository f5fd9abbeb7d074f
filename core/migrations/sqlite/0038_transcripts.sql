-- Chat transcripts by mail (see core/src/conversations/transcripts.rs): when
-- the customer's last transcript was written to the outbox, so that a page
-- cannot mail one more often than every 10 minutes; and whether the
-- workspace mails one by itself when a conversation is marked done. Keep in
-- step with the other backend's migration.
alter table customers add column transcript_sent_at bigint;
alter table tenants add column transcript_on_close boolean not null default false;
