-- A review carried from the run whose answers a run judged again (1), not
-- given on this run (0): a carried review follows its original when that
-- is changed or withdrawn; one given here is the reviewer's own and stays.
ALTER TABLE reviews ADD COLUMN carried INTEGER NOT NULL DEFAULT 0;
