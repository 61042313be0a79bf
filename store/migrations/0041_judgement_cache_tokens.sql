-- The part of a judge call's input tokens read from and written to the
-- provider's prompt cache (a judge's instructions are cached), priced apart.
ALTER TABLE judgements ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE judgements ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
