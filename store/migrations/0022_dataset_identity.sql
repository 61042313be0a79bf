-- assay: foreign keys off
-- A dataset is its bytes read one way: the same file read with another kind
-- or other keys is another dataset, with samples of its own. The SHA-256 of
-- the bytes alone was unique; now the bytes with their reading are. SQLite
-- changes a constraint by copying the table, with foreign keys off so that
-- dropping the old table deletes nothing that refers to it (db.go turns
-- them off around a migration marked so, and checks them before it commits).
CREATE TABLE datasets_new (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('qa', 'mcq', 'math', 'code')),
    sha256       TEXT    NOT NULL,
    format       TEXT    NOT NULL,
    filename     TEXT    NOT NULL DEFAULT '',
    size_bytes   INTEGER NOT NULL,
    question_key TEXT    NOT NULL DEFAULT '',
    answer_key   TEXT    NOT NULL DEFAULT '',
    sample_count INTEGER NOT NULL,
    created_at   TEXT    NOT NULL,
    origin       TEXT    NOT NULL DEFAULT ''
);
INSERT INTO datasets_new (id, name, kind, sha256, format, filename, size_bytes, question_key, answer_key,
    sample_count, created_at, origin)
    SELECT id, name, kind, sha256, format, filename, size_bytes, question_key, answer_key,
    sample_count, created_at, origin FROM datasets;
DROP TABLE datasets;
ALTER TABLE datasets_new RENAME TO datasets;
CREATE UNIQUE INDEX datasets_reading ON datasets (sha256, kind, question_key, answer_key);
