-- Recordings of appointment conferences: one WebM file per participant and
-- source (a camera with its microphone, or a shared screen), muxed by the
-- instance that held the call from the frames its SFU forwards, and stored
-- here in chunks so that every instance serves the download and it goes with
-- its appointment or tenant. Chunks go in one short transaction each, so a
-- long recording never holds SQLite's writer; the recording is listed once
-- `stored_at` is set, after its last chunk.
create table conference_recordings (
    id              text primary key,
    tenant_id       text not null references tenants (id) on delete cascade,
    appointment_id  text not null references appointments (id) on delete cascade,
    participant     text not null,
    source          text not null,          -- CAMERA | SCREEN
    started_at      bigint not null,
    ended_at        bigint not null,
    size            bigint not null,
    created_at      bigint not null,
    stored_at       bigint
);
create index conference_recordings_appointment_idx on conference_recordings (tenant_id, appointment_id, started_at);
-- What retention looks up.
create index conference_recordings_ended_idx on conference_recordings (ended_at);

create table conference_recording_chunks (
    recording_id  text not null references conference_recordings (id) on delete cascade,
    seq           bigint not null,
    data          bytea not null,
    primary key (recording_id, seq)
);

-- Days a conference recording is kept after the call (the workspace's
-- recording settings, `conferenceRetentionDays`).
alter table tenants add column conference_retention_days bigint not null default 90;
