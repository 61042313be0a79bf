-- How many times a run's failed tasks were cleared: part of the version of
-- its results. Clearing deletes results, and the next one stored may take
-- the id of one deleted (the largest id in use plus one), so that the
-- run's count and last id came back to what they were before: a server
-- kept showing the samples table of the failed results after their retry.
ALTER TABLE runs ADD COLUMN results_cleared INTEGER NOT NULL DEFAULT 0;
