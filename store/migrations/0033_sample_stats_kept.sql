-- A finished run's samples table, folded from its sample_sums rows, is
-- kept: a server that starts (or forgets the table) reads it in one row
-- instead of folding 50,000 rows again (a 150,000-result run: about 0.13 s
-- of CPU each time). It is the table of the run's results as they stood
-- when kept — their count, the last one's id, and when the run finished —
-- and is read only while they still stand so (store/samplestatskept.go).
CREATE TABLE sample_stats_kept (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    results_count INTEGER NOT NULL,
    results_last  INTEGER NOT NULL,
    finished_at   TEXT    NOT NULL,
    stats         BLOB    NOT NULL
);
