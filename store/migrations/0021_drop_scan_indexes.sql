-- Reports read the aggregates of migration 0020, and the runs list its
-- condition totals: the covering indexes their scans of every judgement
-- and score used are written with each result and read by nothing.
DROP INDEX judgements_report;
DROP INDEX scores_report;
