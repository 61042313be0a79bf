-- A run is executed by one process at a time: the one holding its lease.
-- The holder renews it while it works; another process leaves the run alone
-- until the lease expires (or its holder, on the same host, is gone).
CREATE TABLE run_leases (
    run_id       INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    holder       TEXT    NOT NULL,
    host         TEXT    NOT NULL,
    pid          INTEGER NOT NULL,
    program      TEXT    NOT NULL,
    acquired_at  TEXT    NOT NULL,
    heartbeat_at TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL
);
