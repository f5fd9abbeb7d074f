-- Join links are found by the digest of their token, as API keys are, so the
-- lookup never needs the token itself. `appointments.join_token` keeps the token
-- only to show the link again, sealed with the operator's key when one is set
-- (see core/src/sealing.rs). Rows from before this migration get their digest
-- when the server next starts (`Services::reseal_secrets`). Keep in step with
-- migrations/postgres.
alter table appointments add column join_token_hash text;
create unique index appointments_join_token_hash on appointments (join_token_hash);
