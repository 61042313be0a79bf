-- Every judgement and score a run writes also went into an index by run
-- (judgements_run, scores_run), read only when a run's aggregates are
-- computed again, which finds them through their results as well: the
-- two cost a sixth of the store's CPU per result (store benchmark
-- BenchmarkSaveResult, 10 writers: 295 to 235 µs per result).
DROP INDEX judgements_run;
DROP INDEX scores_run;
