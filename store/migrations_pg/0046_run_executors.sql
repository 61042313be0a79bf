-- The processes executing a run together, each renewing its row while it
-- works (expires_at, by the database's clock), and the samples each has
-- claimed: a sample's tasks are done by the process holding its claim, and
-- a claim whose process is gone or whose row expired may be taken by
-- another. tasks_done is what the process has finished since it joined,
-- flying the tasks it had in flight when it last renewed its row (beat_at).
CREATE TABLE run_executors (
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	holder TEXT COLLATE "C" NOT NULL,
	host TEXT COLLATE "C" NOT NULL,
	pid BIGINT NOT NULL,
	program TEXT COLLATE "C" NOT NULL,
	joined_at TEXT COLLATE "C" NOT NULL,
	beat_at TEXT COLLATE "C" NOT NULL,
	expires_at TEXT COLLATE "C" NOT NULL,
	tasks_done BIGINT NOT NULL DEFAULT 0,
	flying BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (run_id, holder)
);
CREATE TABLE run_claims (
	run_id BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	sample_id BIGINT NOT NULL,
	holder TEXT COLLATE "C" NOT NULL,
	PRIMARY KEY (run_id, sample_id)
);
