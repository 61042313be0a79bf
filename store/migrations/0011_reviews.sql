-- Review verdicts on the judge's scores. The first schema's reviews table
-- was never used; this one knows who reviewed, what the judge had said, and
-- through which review link. One verdict per score and reviewer: a later one
-- replaces it. The judge's own rows never change.
DROP TABLE reviews;
CREATE TABLE reviews (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    score_id    INTEGER NOT NULL REFERENCES scores (id) ON DELETE CASCADE,
    reviewer    TEXT    NOT NULL,
    verdict     TEXT    NOT NULL CHECK (verdict IN ('agree', 'override')),
    judge_value REAL    NOT NULL,
    value       REAL    NOT NULL, -- the reviewer's value: the judge's when they agree
    note        TEXT    NOT NULL DEFAULT '',
    link        TEXT    NOT NULL DEFAULT '', -- the review link it came through, if any
    created_at  TEXT    NOT NULL,
    UNIQUE (score_id, reviewer)
);
CREATE INDEX reviews_run ON reviews (run_id, score_id);

-- Review links: like share links, for a named expert, with review controls.
CREATE TABLE review_links (
    token      TEXT PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    created_by TEXT    NOT NULL DEFAULT '',
    revoked_at TEXT
);
CREATE INDEX review_links_run ON review_links (run_id);
