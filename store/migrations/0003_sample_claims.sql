-- The samples table counts unverified claims per sample and condition. Most
-- judgements have none; this index lists those that do, so the count reads a
-- few rows instead of every judgement's wide row (raw judge output).
CREATE INDEX judgements_claims ON judgements (run_id, result_id) WHERE unverified_claims != '[]';
