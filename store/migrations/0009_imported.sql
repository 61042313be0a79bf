-- Where a run or dataset came from: '' when assay made it, 'eee' when it was
-- imported from another tool's EEE result files. An imported run is finished
-- and read-only; an imported dataset holds only the samples the files named,
-- under the SHA-256 of the file they were taken from.
ALTER TABLE runs ADD COLUMN origin TEXT NOT NULL DEFAULT '';
ALTER TABLE datasets ADD COLUMN origin TEXT NOT NULL DEFAULT '';
