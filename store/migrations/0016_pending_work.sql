-- Work done for a task whose result is not committed yet: the agent's
-- answer, then each judge call as it returns. A task cut short (a kill, a
-- cancel) goes on from it when the run resumes: neither the agent nor a
-- judge is asked again for what it already answered. The transaction that
-- commits the task's result deletes its rows.
CREATE TABLE pending_work (
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    sample_id  INTEGER NOT NULL,
    condition  TEXT    NOT NULL,
    repetition INTEGER NOT NULL,
    part       TEXT    NOT NULL, -- 'answer', or 'judge/EVALUATOR/PLACE/REPETITION'
    body       TEXT    NOT NULL, -- JSON
    PRIMARY KEY (run_id, sample_id, condition, repetition, part)
);
