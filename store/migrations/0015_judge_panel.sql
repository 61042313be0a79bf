-- A judge panel: every judged answer is scored by each of several judges.
-- judge is the panel judge's name ('' for a run's one judge and for
-- deterministic evaluators). The judge's place in the panel goes into
-- judge_repetition as place × 1000 + repetition, so that the unique key
-- (result, evaluator, judge_repetition) holds one row per judge call; the
-- store reads the two apart.
ALTER TABLE judgements ADD COLUMN judge TEXT NOT NULL DEFAULT '';
