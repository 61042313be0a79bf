-- A verdict its reviewer took back (undone at once, or withdrawn later):
-- the review is deleted, and its withdrawal keeps the run's next number
-- (reviews.seq) from going back, so that a run's reviews never stand at a
-- version (their count and last number) they stood at before.
CREATE TABLE review_withdrawals (
    run_id       BIGINT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    score_id     BIGINT NOT NULL,
    reviewer     TEXT COLLATE "C" NOT NULL,
    seq          BIGINT NOT NULL,
    withdrawn_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX review_withdrawals_run ON review_withdrawals (run_id, seq);
