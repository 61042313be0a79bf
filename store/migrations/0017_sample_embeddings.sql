-- Embeddings of samples' questions, by the model that made them: the
-- routing replay's context features when asked for, fetched once.
CREATE TABLE sample_embeddings (
    sample_id INTEGER NOT NULL REFERENCES samples (id) ON DELETE CASCADE,
    model     TEXT    NOT NULL,
    vector    TEXT    NOT NULL, -- JSON array of numbers
    PRIMARY KEY (sample_id, model)
);
