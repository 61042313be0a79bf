-- A run's per-sample aggregates in two tables: sample_sums, what the
-- samples table shows (counts, and per metric the count, sum and sum of
-- squares of its scores with where the row first met it: store/samplesums.go),
-- and sample_scores, every score line, which the report reads. The samples
-- table read every line for three sums per row: at 150,000 results, 17 MB
-- of lines read and parsed for 3 MB of sums. Every run's rows are
-- computed again when the database opens.
DROP TABLE sample_scores;
CREATE TABLE sample_scores (
    run_id    INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    condition TEXT    NOT NULL,
    sample_id INTEGER NOT NULL,
    scores    TEXT    NOT NULL DEFAULT '', -- judgements and scores, one per line (store/aggregates.go)
    PRIMARY KEY (run_id, condition, sample_id)
) WITHOUT ROWID;
CREATE TABLE sample_sums (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    condition    TEXT    NOT NULL,
    sample_id    INTEGER NOT NULL,
    results      INTEGER NOT NULL DEFAULT 0,
    errors       INTEGER NOT NULL DEFAULT 0, -- results that ended in an agent error
    judge_errors INTEGER NOT NULL DEFAULT 0, -- judgements that ended in an error
    claims       INTEGER NOT NULL DEFAULT 0, -- unverified claims over every judgement
    sums         TEXT    NOT NULL DEFAULT '', -- per metric, its sums (store/samplesums.go)
    PRIMARY KEY (run_id, condition, sample_id)
) WITHOUT ROWID;
INSERT OR IGNORE INTO aggregates_pending (run_id) SELECT id FROM runs;
