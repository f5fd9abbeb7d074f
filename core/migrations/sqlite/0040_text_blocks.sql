-- Text blocks: answers an agent inserts with `/shortcut` (see
-- core/src/text_blocks.rs). A block belongs to the workspace (`TENANT`), a team
-- or one user; one owner has at most one block per shortcut and language (no
-- language: the block for every language). `uses` counts the messages sent
-- from it; the message report counts them per agent from `report_facts`.
-- Keep in step with the other backend's migration.
create table text_blocks (
    id          text primary key,
    tenant_id   text not null references tenants (id) on delete cascade,
    scope       text not null,             -- TENANT | TEAM | USER
    team_id     text references teams (id) on delete cascade,
    user_id     text references users (id) on delete cascade,
    shortcut    text not null,
    language    text,
    body        text not null,
    uses        bigint not null default 0,
    created_at  bigint not null,
    updated_at  bigint not null
);
create unique index text_blocks_owner_shortcut_idx
    on text_blocks (tenant_id, scope, coalesce(team_id, ''), coalesce(user_id, ''), shortcut, coalesce(language, ''));
create index text_blocks_team_idx on text_blocks (team_id);
create index text_blocks_user_idx on text_blocks (user_id);
