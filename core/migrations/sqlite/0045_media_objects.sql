-- Media in object storage (core/src/media_store.rs): the bytes of chat files,
-- session-recording batches and call-recording chunks go to the media store,
-- and each row keeps the object's key (`blob_key`). A row with `data` and no
-- key was written before this version and is read from the row until
-- `rapport admin migrate-media` moves it. Keep in step with the other
-- backend's file.
--
-- SQLite cannot drop a NOT NULL in place: each table is rebuilt, as its docs
-- describe (https://www.sqlite.org/lang_altertable.html#otheralter). No other
-- table refers to these three.

create table chat_files_next (
    id            text primary key,
    tenant_id     text not null references tenants (id) on delete cascade,
    customer_id   text not null references customers (id) on delete cascade,
    name          text not null,
    content_type  text not null,
    size          bigint not null,
    data          blob,
    created_at    bigint not null,
    blob_key      text,
    check ((data is null) <> (blob_key is null))
);
insert into chat_files_next (id, tenant_id, customer_id, name, content_type, size, data, created_at)
    select id, tenant_id, customer_id, name, content_type, size, data, created_at from chat_files;
drop table chat_files;
alter table chat_files_next rename to chat_files;
create index chat_files_customer_idx on chat_files (tenant_id, customer_id);
create index chat_files_blob_idx on chat_files (blob_key) where blob_key is not null;

create table recording_chunks_next (
    tenant_id    text not null,
    session_id   text not null,
    seq          bigint not null,
    first_at     bigint not null,
    last_at      bigint not null,
    event_count  bigint not null,
    data         blob,
    blob_key     text,
    check ((data is null) <> (blob_key is null)),
    primary key (tenant_id, session_id, seq),
    foreign key (tenant_id, session_id) references recorded_sessions (tenant_id, id) on delete cascade
);
insert into recording_chunks_next (tenant_id, session_id, seq, first_at, last_at, event_count, data)
    select tenant_id, session_id, seq, first_at, last_at, event_count, data from recording_chunks;
drop table recording_chunks;
alter table recording_chunks_next rename to recording_chunks;
create index recording_chunks_blob_idx on recording_chunks (blob_key) where blob_key is not null;

create table conference_recording_chunks_next (
    recording_id  text not null references conference_recordings (id) on delete cascade,
    seq           bigint not null,
    data          blob,
    blob_key      text,
    check ((data is null) <> (blob_key is null)),
    primary key (recording_id, seq)
);
insert into conference_recording_chunks_next (recording_id, seq, data)
    select recording_id, seq, data from conference_recording_chunks;
drop table conference_recording_chunks;
alter table conference_recording_chunks_next rename to conference_recording_chunks;
create index conference_recording_chunks_blob_idx on conference_recording_chunks (blob_key)
    where blob_key is not null;

-- Objects whose row is gone, to delete from the store. Every delete of a row
-- that names an object, by hand or by a cascade (a customer erased, a tenant
-- or appointment deleted, retention), queues its key here in the deleting
-- transaction, so a delete that rolls back queues nothing and one that commits
-- never loses its object. The media cleanup job drains it.
create table media_garbage (
    key        text primary key,
    queued_at  bigint not null
);
create index media_garbage_queued_idx on media_garbage (queued_at);

create trigger chat_files_media_garbage after delete on chat_files
    when old.blob_key is not null
    begin
        insert into media_garbage (key, queued_at)
            values (old.blob_key, cast((julianday('now') - 2440587.5) * 86400000 as integer))
            on conflict (key) do nothing;
    end;
create trigger recording_chunks_media_garbage after delete on recording_chunks
    when old.blob_key is not null
    begin
        insert into media_garbage (key, queued_at)
            values (old.blob_key, cast((julianday('now') - 2440587.5) * 86400000 as integer))
            on conflict (key) do nothing;
    end;
create trigger conference_recording_chunks_media_garbage after delete on conference_recording_chunks
    when old.blob_key is not null
    begin
        insert into media_garbage (key, queued_at)
            values (old.blob_key, cast((julianday('now') - 2440587.5) * 86400000 as integer))
            on conflict (key) do nothing;
    end;
