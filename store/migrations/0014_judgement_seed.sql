-- The seed a judge call was made with, so that judge repetitions with
-- judge.vary_seed can be told apart; NULL for deterministic evaluators and
-- for judgements stored before.
ALTER TABLE judgements ADD COLUMN seed INTEGER;
