-- Full-text search (see core/src/search.rs). Messages and customers carry a
-- `tsvector` of their text (the `simple` configuration: lowercased words, no
-- stemming, so every language is searched alike), generated in the same
-- statement as each write, with a GIN index each. Keep in step with the other
-- backend's migration.
alter table messages add column search tsvector
    generated always as (to_tsvector('simple', coalesce(message, ''))) stored;
create index messages_search_idx on messages using gin (search);
alter table customers add column search tsvector
    generated always as (to_tsvector('simple',
        coalesce(first_name, '') || ' ' || coalesce(last_name, '') || ' ' ||
        replace(replace(coalesce(email, ''), '@', ' '), '.', ' ') || ' ' || coalesce(external_id, ''))) stored;
create index customers_search_idx on customers using gin (search);
