-- Watchdog and SLA alerts (issue 22): grouping windows, webhook receivers and
-- their signing secret, and unread notifications. Keep in step with migrations/postgres.

-- How long a watchdog's alerts are grouped (core/src/engine/watchdogs.rs): the
-- first event of a window is sent at once, the rest as one summary at its end.
alter table tenants add column watchdog_window_seconds bigint not null default 300;

-- The link of the latest event of a window, for its summary.
alter table watchdog_windows add column last_link text;

-- A WEBHOOK receiver's URL (of a watchdog or an SLA rule) gets an internal endpoint
-- row, so its alerts go through the webhook engine like any event (signed, retried,
-- held by the circuit, checked by the SSRF guard, logged) without being a
-- subscription: the subscriptions API neither lists nor changes it, and no domain
-- event is queued to it. One row per tenant and URL.
alter table webhook_endpoints add column receiver boolean not null default false;
create unique index webhook_endpoints_receiver_url_key on webhook_endpoints (tenant_id, url) where receiver;

-- The secret that signs a tenant's alerts to webhook receivers, one for all of
-- them; its receiver rows carry copies, changed in the same transaction.
create table alert_secrets (
    tenant_id             text primary key references tenants (id) on delete cascade,
    secret                text not null,
    previous_secret       text,
    previous_secret_until bigint,
    updated_at            bigint not null
);

-- A user's unread count reads only the unread rows.
create index notifications_unread_idx on notifications (tenant_id, user_id) where read_at is null;
