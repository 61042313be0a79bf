-- What a run's report and samples table read, kept as each result commits,
-- in the result's transaction: one row per sample and condition with its
-- counts and every score it has (sample_scores), and one row per condition
-- with its totals (condition_totals). Reading them replaces scans of every
-- result, judgement and score: 3 s for the first report of a run of
-- 150,000 results. Runs stored before are listed in aggregates_pending, and
-- opening the database computes their rows from their results.
CREATE TABLE sample_scores (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    condition    TEXT    NOT NULL,
    sample_id    INTEGER NOT NULL,
    results      INTEGER NOT NULL DEFAULT 0,
    errors       INTEGER NOT NULL DEFAULT 0, -- results that ended in an agent error
    judge_errors INTEGER NOT NULL DEFAULT 0, -- judgements that ended in an error
    claims       INTEGER NOT NULL DEFAULT 0, -- unverified claims over every judgement
    scores       TEXT    NOT NULL DEFAULT '', -- judgements and scores, one per line (store/aggregates.go)
    PRIMARY KEY (run_id, condition, sample_id)
) WITHOUT ROWID;

CREATE TABLE condition_totals (
    run_id       INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    condition    TEXT    NOT NULL,
    done         INTEGER NOT NULL DEFAULT 0,
    errors       INTEGER NOT NULL DEFAULT 0,
    judge_errors INTEGER NOT NULL DEFAULT 0,
    tokens_in    INTEGER NOT NULL DEFAULT 0,
    tokens_out   INTEGER NOT NULL DEFAULT 0,
    cost_usd     REAL    NOT NULL DEFAULT 0, -- agent and judge calls, added result by result
    latency_ms   INTEGER NOT NULL DEFAULT 0, -- the agent's, summed
    retries      INTEGER NOT NULL DEFAULT 0, -- results retried after a failure
    tool_calls   INTEGER NOT NULL DEFAULT 0,
    tool_errors  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, condition)
) WITHOUT ROWID;

CREATE TABLE aggregates_pending (
    run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE
);
INSERT INTO aggregates_pending (run_id) SELECT id FROM runs;
