-- The runs list names each run's conditions: read through the primary key
-- (run_id, name), each row's position was a seek into a table whose rows
-- hold whole condition snapshots (3,000 runs of 20 conditions: 60 ms of a
-- 140 ms list). This index holds what the list reads.
CREATE INDEX run_conditions_names ON run_conditions (run_id, position, name);
