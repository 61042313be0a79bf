-- A run's results counted by the model that answered and the source of
-- their cost, kept as each result commits (model_totals), in place of an
-- index of every result by model (results_models) that each report
-- counted through: at 150,000 results, 50 ms of a report's first request,
-- before its scores could be read.
CREATE TABLE model_totals (
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    model       TEXT    NOT NULL,
    cost_source TEXT    NOT NULL,
    results     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, model, cost_source)
) WITHOUT ROWID;
INSERT INTO model_totals (run_id, model, cost_source, results)
    SELECT run_id, model, cost_source, count(*) FROM results GROUP BY run_id, model, cost_source;
DROP INDEX results_models;
