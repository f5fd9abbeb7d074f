-- Outgoing e-mail (see core/src/mail.rs). Keep in step with the other backend.
--
-- Every mail Rapport writes (appointment invitations so far) is kept here. With an
-- SMTP server configured, the mail worker sends `PENDING` mails and marks them
-- `SENT`, or `FAILED` once its attempts are spent; without one they stay `PENDING`
-- and admins read them in the dashboard's outbox, so nothing needs a mail server
-- to try Rapport out.
create table mail_outbox (
    id              text primary key,
    tenant_id       text not null references tenants (id) on delete cascade,
    to_address      text not null,
    subject         text not null,
    body            text not null,
    about           text,             -- what the mail is about, e.g. `appointment:<id>`
    status          text not null,    -- PENDING, SENT, FAILED
    attempts        integer not null default 0,
    next_attempt_at bigint not null,  -- unix ms; a claim moves it past its lease
    last_error      text,
    created_at      bigint not null,
    sent_at         bigint
);
create index mail_outbox_by_tenant on mail_outbox (tenant_id, created_at);
create index mail_outbox_due on mail_outbox (status, next_attempt_at);
