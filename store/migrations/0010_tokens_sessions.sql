-- Named access tokens: a person's name, a role, and the SHA-256 of the
-- secret (the secret itself is shown once and never stored). A revoked
-- token keeps its row, so that what its holder made still names them.
CREATE TABLE tokens (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    role       TEXT NOT NULL,
    hash       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL DEFAULT '',
    last_used  TEXT,
    revoked_at TEXT
);
CREATE UNIQUE INDEX tokens_active_name ON tokens (name) WHERE revoked_at IS NULL;

-- Browser sessions, by the SHA-256 of their random id. token_id is NULL for
-- the server's own --token, whose hash the session keeps so that a new
-- --token ends the old one's sessions.
CREATE TABLE sessions (
    id_hash    TEXT PRIMARY KEY,
    token_id   INTEGER REFERENCES tokens (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL,
    name       TEXT NOT NULL,
    role       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    last_seen  TEXT NOT NULL
);
CREATE INDEX sessions_token ON sessions (token_id);

-- Who made a run, a condition, a share link: the signed-in name, '' on a
-- server without tokens.
ALTER TABLE runs ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE conditions ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE share_links ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
