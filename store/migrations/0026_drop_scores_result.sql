-- Every score was also written into an index by result (scores_result),
-- which the reads of a result's scores can do without: they find its
-- judgements by result (the judgements' unique index) and the scores by
-- judgement (the scores' own), as the cascade of a deleted run does. One
-- B-tree write fewer per score, three per rubric result: 4–6% of the
-- store's instructions per result (BenchmarkSaveResult, one writer,
-- counted with callgrind).
DROP INDEX scores_result;
