-- A finished run's scores, as its report folds them from its
-- sample_scores rows (one per sample and condition), are kept as the
-- samples table is (migration 0033): a server that starts reads them in
-- one row (store/kept.go, store/reportscoreskept.go).
CREATE TABLE report_scores_kept (
    run_id        INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    results_count INTEGER NOT NULL,
    results_last  INTEGER NOT NULL,
    finished_at   TEXT    NOT NULL,
    stats         BLOB    NOT NULL
);
