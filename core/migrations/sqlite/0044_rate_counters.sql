-- Rate limits shared by instances (core/src/rate_windows.rs): the count of
-- each limit's key (a SHA-256 digest, never the address, e-mail or token) per
-- fixed window. Instances add to it a lease at a time. Keep in step with the
-- other backend's file.
create table rate_counters (
    key           text not null,
    window_start  bigint not null,
    used          bigint not null,
    expires_at    bigint not null,
    primary key (key, window_start)
);
create index rate_counters_expiry_idx on rate_counters (expires_at);
