-- What kind of failure an error is (timeout, rate_limited, server_error, …),
-- beside its message, so that a report counts errors by kind; the retries a
-- result needed (one line each: the failure and the wait), apart from the
-- model calls its tool loop made; and how many calls a judgement took.
ALTER TABLE results ADD COLUMN error_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN retries TEXT NOT NULL DEFAULT '[]';
ALTER TABLE judgements ADD COLUMN error_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE judgements ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
-- Only failed rows, and only retried results: the report counts them from
-- these without reading the wide rows.
CREATE INDEX results_errors ON results (run_id, condition, error_kind) WHERE error != '';
CREATE INDEX judgements_errors ON judgements (run_id, result_id, error_kind) WHERE error != '';
CREATE INDEX results_retried ON results (run_id, condition) WHERE retries != '[]';
