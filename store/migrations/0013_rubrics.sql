-- Rubrics saved on the Rubrics page, reused across runs. source is the
-- rubric as a run file writes it under rubrics.NAME (YAML); a run copies the
-- rubric it uses into its config snapshot, so editing one here never changes
-- a finished run.
CREATE TABLE rubrics (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	source     TEXT NOT NULL,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL,
	updated_by TEXT NOT NULL DEFAULT ''
);
