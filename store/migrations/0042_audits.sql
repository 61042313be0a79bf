-- Judge audits of a run: what each found (a JSON object: its probes'
-- figures, its calls and cost), kept apart from the run's own results.
CREATE TABLE audits (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	created_at TEXT NOT NULL,
	calls INTEGER NOT NULL,
	cost_usd REAL NOT NULL,
	result TEXT NOT NULL
);
CREATE INDEX audits_run ON audits (run_id, id);
