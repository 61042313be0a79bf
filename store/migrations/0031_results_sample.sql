-- results.sample_id references samples: deleting a sample checks that no
-- result names it, and without an index that starts with sample_id each
-- check read every result's key. A dataset of 2,000 samples that no run
-- used took 28 s to delete from a database holding 150,000 results of
-- other runs, every write waiting; one of 100,000 would have taken hours.
CREATE INDEX results_sample ON results (sample_id);
