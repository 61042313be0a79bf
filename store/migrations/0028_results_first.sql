-- The id of a run's first result, kept on the run beside results_last as
-- each result commits: a run's results lie between the two, so a search
-- of its responses reads that range of results in id order instead of
-- finding each of them through the run's index (about half the cost at
-- 150,000 results). A result stored under a lower id than the first (ids
-- freed when failed results are cleared are given again) lowers it.
ALTER TABLE runs ADD COLUMN results_first INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET results_first = (SELECT coalesce(min(id), 0) FROM results WHERE results.run_id = runs.id);
