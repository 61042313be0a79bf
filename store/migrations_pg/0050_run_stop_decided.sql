-- How many whole samples a stopping rule had seen when it held: the run
-- then stops taking samples, and those under way finish (samples).
-- 0 for a stop recorded before it was kept.
ALTER TABLE run_stops ADD COLUMN decided_at BIGINT NOT NULL DEFAULT 0;
