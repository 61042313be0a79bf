-- A run with a stopping rule that stopped before its plan's end: when,
-- why, and what it left undone.
CREATE TABLE run_stops (
	run_id INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
	samples INTEGER NOT NULL,     -- samples done, whole
	of_samples INTEGER NOT NULL,  -- samples in the plan
	reason TEXT NOT NULL,
	saved_tasks INTEGER NOT NULL, -- answers not asked for
	saved_calls INTEGER NOT NULL, -- their model calls, agent's and judges', at the run's calls per answer so far
	saved_usd REAL NOT NULL,      -- their estimated cost; 0 when unpriced
	stopped_at TEXT NOT NULL,
	extended INTEGER NOT NULL DEFAULT 0 -- extended since toward the plan's end: the rule no longer stops it
);
