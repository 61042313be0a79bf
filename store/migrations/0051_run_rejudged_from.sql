-- A run judged again from another's answers names that run: it shares its
-- answers, made no agent call, and people's reviews of those answers count
-- for it too. NULL for a run that made its own answers.
ALTER TABLE runs ADD COLUMN rejudged_from INTEGER;
