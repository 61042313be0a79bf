-- The run's results when its holder took the lease: what the holder has
-- done since is the run's results now less these (GET /api/runs/:id's
-- executors).
ALTER TABLE run_leases ADD COLUMN results_before INTEGER NOT NULL DEFAULT 0;
