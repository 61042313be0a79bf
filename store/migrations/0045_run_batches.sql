-- The batches a run's calls were sent in, kept the moment the provider
-- made them: a process that dies polls the same batch again after it
-- restarts instead of paying for its lines twice. lines holds the lines'
-- ids (a JSON array); a result and a judgement count the calls they made
-- in batches.
CREATE TABLE run_batches (
	id INTEGER PRIMARY KEY,
	run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	provider TEXT NOT NULL,
	provider_id TEXT NOT NULL,
	endpoint TEXT NOT NULL,
	status TEXT NOT NULL,
	lines TEXT NOT NULL,
	created_at TEXT NOT NULL,
	ended_at TEXT
);
CREATE INDEX run_batches_run ON run_batches (run_id, id);
ALTER TABLE judgements ADD COLUMN batched_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN batched_calls INTEGER NOT NULL DEFAULT 0;
