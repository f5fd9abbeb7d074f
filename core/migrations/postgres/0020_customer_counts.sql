-- How many customers each tenant has, kept in the transaction of every create and
-- delete. An unfiltered customer list reads its total here in one row, where
-- `count(*)` read every customer of the tenant, so lists slowed as customers grew.
create table customer_counts (
    tenant_id  text primary key references tenants (id) on delete cascade,
    customers  bigint not null
);
insert into customer_counts (tenant_id, customers)
    select tenant_id, count(*) from customers group by tenant_id;
