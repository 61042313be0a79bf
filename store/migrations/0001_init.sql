-- The schema for the whole product; later migrations add columns, not rewrites.

CREATE TABLE datasets (
    id           INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL,
    kind         TEXT    NOT NULL CHECK (kind IN ('qa', 'mcq', 'math', 'code')),
    sha256       TEXT    NOT NULL UNIQUE,
    format       TEXT    NOT NULL,
    filename     TEXT    NOT NULL DEFAULT '',
    size_bytes   INTEGER NOT NULL,
    question_key TEXT    NOT NULL DEFAULT '',
    answer_key   TEXT    NOT NULL DEFAULT '',
    sample_count INTEGER NOT NULL,
    created_at   TEXT    NOT NULL
);

CREATE TABLE samples (
    id          INTEGER PRIMARY KEY,
    dataset_id  INTEGER NOT NULL REFERENCES datasets (id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL,
    sample_id   TEXT    NOT NULL,
    input       TEXT    NOT NULL,
    reference   TEXT    NOT NULL,
    choices     TEXT    NOT NULL DEFAULT '[]',
    test        TEXT    NOT NULL DEFAULT '',
    entry_point TEXT    NOT NULL DEFAULT '',
    metadata    TEXT    NOT NULL DEFAULT '{}',
    UNIQUE (dataset_id, sample_id),
    UNIQUE (dataset_id, ordinal)
);

CREATE TABLE conditions (
    id                       INTEGER PRIMARY KEY,
    name                     TEXT    NOT NULL UNIQUE,
    system_prompt            TEXT    NOT NULL DEFAULT '',
    require_mcp_tool_use     INTEGER NOT NULL DEFAULT 0,
    require_mcp_tool_success INTEGER NOT NULL DEFAULT 0,
    created_at               TEXT    NOT NULL,
    updated_at               TEXT    NOT NULL
);

CREATE TABLE mcp_servers (
    id           INTEGER PRIMARY KEY,
    condition_id INTEGER NOT NULL REFERENCES conditions (id) ON DELETE CASCADE,
    position     INTEGER NOT NULL,
    name         TEXT    NOT NULL,
    transport    TEXT    NOT NULL CHECK (transport IN ('stdio', 'http', 'sse')),
    command      TEXT    NOT NULL DEFAULT '',
    args         TEXT    NOT NULL DEFAULT '[]',
    env          TEXT    NOT NULL DEFAULT '{}',
    url          TEXT    NOT NULL DEFAULT '',
    headers      TEXT    NOT NULL DEFAULT '{}',
    UNIQUE (condition_id, name)
);

CREATE TABLE prices (
    model           TEXT PRIMARY KEY,
    input_per_mtok  REAL NOT NULL,
    output_per_mtok REAL NOT NULL,
    updated_at      TEXT NOT NULL
);

-- A run keeps a frozen snapshot of its config and of each condition, so that
-- editing or deleting a condition never alters a run's record.
CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL DEFAULT '',
    dataset_id  INTEGER NOT NULL REFERENCES datasets (id),
    status      TEXT    NOT NULL,
    config      TEXT    NOT NULL,
    repetitions INTEGER NOT NULL,
    total_tasks INTEGER NOT NULL,
    budget_usd  REAL    NOT NULL DEFAULT 0,
    error       TEXT    NOT NULL DEFAULT '',
    created_at  TEXT    NOT NULL,
    started_at  TEXT,
    finished_at TEXT
);
CREATE INDEX runs_status ON runs (status);
CREATE INDEX runs_dataset ON runs (dataset_id);

CREATE TABLE run_conditions (
    run_id   INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name     TEXT    NOT NULL,
    snapshot TEXT    NOT NULL,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE results (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    sample_id   INTEGER NOT NULL REFERENCES samples (id),
    condition   TEXT    NOT NULL,
    repetition  INTEGER NOT NULL,
    response    TEXT    NOT NULL DEFAULT '',
    error       TEXT    NOT NULL DEFAULT '',
    tokens_in   INTEGER NOT NULL DEFAULT 0,
    tokens_out  INTEGER NOT NULL DEFAULT 0,
    cost_usd    REAL    NOT NULL DEFAULT 0,
    latency_ms  INTEGER NOT NULL DEFAULT 0,
    attempts    INTEGER NOT NULL DEFAULT 1,
    tool_calls  TEXT    NOT NULL DEFAULT '[]',
    created_at  TEXT    NOT NULL,
    UNIQUE (run_id, sample_id, condition, repetition)
);

-- One evaluator's verdict on a result: a judge call or a deterministic check.
CREATE TABLE judgements (
    id                INTEGER PRIMARY KEY,
    result_id         INTEGER NOT NULL REFERENCES results (id) ON DELETE CASCADE,
    run_id            INTEGER NOT NULL,
    evaluator         TEXT    NOT NULL,
    judge_repetition  INTEGER NOT NULL DEFAULT 0,
    error             TEXT    NOT NULL DEFAULT '',
    raw               TEXT    NOT NULL DEFAULT '',
    detail            TEXT    NOT NULL DEFAULT '',
    unverified_claims TEXT    NOT NULL DEFAULT '[]',
    tokens_in         INTEGER NOT NULL DEFAULT 0,
    tokens_out        INTEGER NOT NULL DEFAULT 0,
    cost_usd          REAL    NOT NULL DEFAULT 0,
    latency_ms        INTEGER NOT NULL DEFAULT 0,
    UNIQUE (result_id, evaluator, judge_repetition)
);
CREATE INDEX judgements_run ON judgements (run_id);

CREATE TABLE scores (
    id           INTEGER PRIMARY KEY,
    judgement_id INTEGER NOT NULL REFERENCES judgements (id) ON DELETE CASCADE,
    result_id    INTEGER NOT NULL,
    run_id       INTEGER NOT NULL,
    metric       TEXT    NOT NULL,
    value        REAL    NOT NULL,
    reasoning    TEXT    NOT NULL DEFAULT '',
    UNIQUE (judgement_id, metric)
);
CREATE INDEX scores_run ON scores (run_id, metric);
CREATE INDEX scores_result ON scores (result_id);

CREATE TABLE share_links (
    token      TEXT PRIMARY KEY,
    run_id     INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    created_at TEXT    NOT NULL,
    revoked_at TEXT
);

CREATE TABLE reviews (
    id         INTEGER PRIMARY KEY,
    score_id   INTEGER NOT NULL REFERENCES scores (id) ON DELETE CASCADE,
    verdict    TEXT    NOT NULL CHECK (verdict IN ('agree', 'override')),
    value      REAL,
    note       TEXT    NOT NULL DEFAULT '',
    created_at TEXT    NOT NULL
);
CREATE INDEX reviews_score ON reviews (score_id);
