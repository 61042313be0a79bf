-- A verdict keeps what its score is of — the evaluator and metric, the
-- condition, sample and repetition — which never change. Every review step
-- and every samples table filtered by review read each verdict of the run
-- with a lookup of its score, judgement and result: 0.45 s a step with
-- 34,000 verdicts on a 150,000-result run.
ALTER TABLE reviews ADD COLUMN evaluator TEXT NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN metric TEXT NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN condition TEXT NOT NULL DEFAULT '';
ALTER TABLE reviews ADD COLUMN sample_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE reviews ADD COLUMN repetition INTEGER NOT NULL DEFAULT 0;
UPDATE reviews SET (evaluator, metric, condition, sample_id, repetition) = (
    SELECT j.evaluator, s.metric, r.condition, r.sample_id, r.repetition
    FROM scores s JOIN judgements j ON j.id = s.judgement_id JOIN results r ON r.id = s.result_id
    WHERE s.id = reviews.score_id);

-- Each verdict given, or given again, takes the run's next number: a
-- server keeps a run's verdicts and reads only those given since the last
-- it holds. (created_at cannot tell: its text does not sort as time does,
-- "…:05Z" after "…:05.5Z".)
ALTER TABLE reviews ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
UPDATE reviews SET seq = given.n
    FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM reviews) AS given
    WHERE reviews.id = given.id;
CREATE INDEX reviews_seq ON reviews (run_id, seq);
