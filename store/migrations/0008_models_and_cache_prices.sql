-- The model that answered each result (a command agent names it only in its
-- output), the prompt-cache part of its input tokens, and where its cost
-- came from: the price table, or the agent's own report when the table has
-- no price for the model. Prices gain cache rates; 0 means the usual ratio
-- to the input price (a read a tenth, a write a quarter more).
ALTER TABLE results ADD COLUMN model TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN cost_source TEXT NOT NULL DEFAULT '';
ALTER TABLE prices ADD COLUMN cache_read_per_mtok REAL NOT NULL DEFAULT 0;
ALTER TABLE prices ADD COLUMN cache_write_per_mtok REAL NOT NULL DEFAULT 0;
-- The report lists the models that answered and where their cost came from.
CREATE INDEX results_models ON results (run_id, model, cost_source);
