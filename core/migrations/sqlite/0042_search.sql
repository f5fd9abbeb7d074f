-- Full-text search (see core/src/search.rs). Every message with text and
-- every customer (names, e-mail, external id) is one document: a row of
-- `search_docs` (its tenant, customer, message and time), whose integer key is
-- the row id of its text in the FTS5 table `search_index`. Triggers keep both
-- in the transaction of each write. Keep in step with the other backend's
-- migration.
create table search_docs (
    doc          integer primary key,
    tenant_id    text not null,
    customer_id  text not null,
    message_id   text,                     -- null: the customer's own document
    at           bigint not null
);
create unique index search_docs_message_idx on search_docs (message_id);
create unique index search_docs_customer_idx on search_docs (customer_id) where message_id is null;

create virtual table search_index using fts5(
    body,
    tokenize = 'unicode61 remove_diacritics 2'
);

insert into search_docs (tenant_id, customer_id, message_id, at)
    select tenant_id, id, null, created_at from customers;
insert into search_index (rowid, body)
    select d.doc,
           trim(coalesce(c.first_name, '') || ' ' || coalesce(c.last_name, '') || ' ' || coalesce(c.email, '') || ' ' || coalesce(c.external_id, ''))
    from search_docs d join customers c on c.id = d.customer_id where d.message_id is null;
insert into search_docs (tenant_id, customer_id, message_id, at)
    select tenant_id, customer_id, id, created_at from messages where coalesce(message, '') <> '';
insert into search_index (rowid, body)
    select d.doc, m.message from search_docs d join messages m on m.id = d.message_id;

create trigger messages_search_insert after insert on messages when coalesce(new.message, '') <> '' begin
    insert into search_docs (tenant_id, customer_id, message_id, at) values (new.tenant_id, new.customer_id, new.id, new.created_at);
    insert into search_index (rowid, body) values (last_insert_rowid(), new.message);
end;
create trigger messages_search_delete after delete on messages begin
    delete from search_index where rowid = (select doc from search_docs where message_id = old.id);
    delete from search_docs where message_id = old.id;
end;
create trigger customers_search_insert after insert on customers begin
    insert into search_docs (tenant_id, customer_id, message_id, at) values (new.tenant_id, new.id, null, new.created_at);
    insert into search_index (rowid, body) values (last_insert_rowid(),
        trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, '') || ' ' || coalesce(new.email, '') || ' ' || coalesce(new.external_id, '')));
end;
create trigger customers_search_update after update of first_name, last_name, email, external_id on customers begin
    delete from search_index where rowid = (select doc from search_docs where customer_id = old.id and message_id is null);
    insert into search_index (rowid, body) values ((select doc from search_docs where customer_id = new.id and message_id is null),
        trim(coalesce(new.first_name, '') || ' ' || coalesce(new.last_name, '') || ' ' || coalesce(new.email, '') || ' ' || coalesce(new.external_id, '')));
end;
create trigger customers_search_delete after delete on customers begin
    delete from search_index where rowid in (select doc from search_docs where customer_id = old.id);
    delete from search_docs where customer_id = old.id;
end;
