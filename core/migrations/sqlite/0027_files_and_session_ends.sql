-- Files sent in conversations (by visitors from the widget, by agents from the
-- inbox), stored in the database so that every instance serves them. A file is
-- reached only through its download link: `id` is the digest of the random
-- token in that link, so the table alone does not give the links away.
create table chat_files (
    id            text primary key,
    tenant_id     text not null references tenants (id) on delete cascade,
    customer_id   text not null references customers (id) on delete cascade,
    name          text not null,
    content_type  text not null,
    size          bigint not null,
    data          blob not null,
    created_at    bigint not null
);
create index chat_files_customer_idx on chat_files (tenant_id, customer_id);

-- The stack of a script error, as the browser gave it.
alter table script_errors add column stack text;

-- A recorded session of the visitor script ends after a quiet spell: it is then
-- closed (no more batches), its reason decided and counted in the session reports.
-- Quiet is measured on the server's clock (`last_batch_at`, when its last batch
-- was stored), never on the visitor's (`ended_at` comes from its events).
alter table recorded_sessions add column last_batch_at bigint;
alter table recorded_sessions add column closed_at bigint;
alter table recorded_sessions add column reason text;
-- Its last batch (or its start, before any): what the closing sweep looks up.
create index recorded_sessions_open_idx on recorded_sessions ((coalesce(last_batch_at, started_at)))
    where closed_at is null and write_token_hash is not null;
