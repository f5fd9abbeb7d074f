-- Media in object storage (core/src/media_store.rs): the bytes of chat files,
-- session-recording batches and call-recording chunks go to the media store,
-- and each row keeps the object's key (`blob_key`). A row with `data` and no
-- key was written before this version and is read from the row until
-- `rapport admin migrate-media` moves it. Keep in step with the other
-- backend's file.

alter table chat_files alter column data drop not null;
alter table chat_files add column blob_key text;
alter table chat_files add constraint chat_files_one_place check ((data is null) <> (blob_key is null));
create index chat_files_blob_idx on chat_files (blob_key) where blob_key is not null;

alter table recording_chunks alter column data drop not null;
alter table recording_chunks add column blob_key text;
alter table recording_chunks add constraint recording_chunks_one_place check ((data is null) <> (blob_key is null));
create index recording_chunks_blob_idx on recording_chunks (blob_key) where blob_key is not null;

alter table conference_recording_chunks alter column data drop not null;
alter table conference_recording_chunks add column blob_key text;
alter table conference_recording_chunks add constraint conference_recording_chunks_one_place
    check ((data is null) <> (blob_key is null));
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

create function queue_media_garbage() returns trigger language plpgsql as $$
begin
    if old.blob_key is not null then
        insert into media_garbage (key, queued_at)
            values (old.blob_key, (extract(epoch from clock_timestamp()) * 1000)::bigint)
            on conflict (key) do nothing;
    end if;
    return old;
end;
$$;
create trigger chat_files_media_garbage after delete on chat_files
    for each row execute function queue_media_garbage();
create trigger recording_chunks_media_garbage after delete on recording_chunks
    for each row execute function queue_media_garbage();
create trigger conference_recording_chunks_media_garbage after delete on conference_recording_chunks
    for each row execute function queue_media_garbage();
