-- The report's scan of judgements reads each one's judge repetition and
-- panel judge too (0014, 0015): the covering index holds them, so the scan
-- never touches the wide rows (raw judge output).
DROP INDEX judgements_report;
CREATE INDEX judgements_report ON judgements (run_id, result_id, evaluator, judge_repetition, judge, tokens_in, tokens_out,
    cost_usd, error);
