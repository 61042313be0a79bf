-- What a report's version needs of a run's results, kept on the run as each
-- result commits (and as failed ones are cleared for a retry): their count
-- and the id of the latest. Counting them took a scan of the run's results
-- on every page view and progress poll: 50 ms at 150,000 results.
ALTER TABLE runs ADD COLUMN results_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN results_last INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET results_count = (SELECT count(*) FROM results WHERE results.run_id = runs.id),
    results_last = (SELECT coalesce(max(id), 0) FROM results WHERE results.run_id = runs.id);
