-- Secrets the server signs with (the CSRF tokens bound to a browser's
-- session): made once per database, so forms outlive a restart.
CREATE TABLE server_keys (
    name       TEXT PRIMARY KEY,
    value      BLOB NOT NULL,
    created_at TEXT NOT NULL
);
