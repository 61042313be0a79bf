-- An imported run keeps the key of the files it came from, so that the
-- same files imported again lead to it instead of making a second run.
ALTER TABLE runs ADD COLUMN import_key TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_import_key ON runs (import_key) WHERE import_key != '';
