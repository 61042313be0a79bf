-- What people say of a run, and its headline figure. tags are comma-separated
-- words a run can be found by; note is free text. headline is the JSON of the
-- run's main metric per condition, written once the run has ended and cleared
-- when it goes on, so that the list of runs shows it without reading scores.
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN headline TEXT NOT NULL DEFAULT '';
