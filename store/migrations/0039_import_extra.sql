-- What the files a run was imported from hold that the import does not
-- read (another tool's own fields), kept as given.
CREATE TABLE run_import_extra (
	run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	fields TEXT NOT NULL
);
