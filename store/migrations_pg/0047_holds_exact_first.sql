-- holds(x, text) looks for text as it is first, and folds the case of both
-- only where it is not found so: lower() copies every response it is
-- given, and reading a run's 150,000 responses for a text most of them
-- hold ("the") took 480 ms of one core with it, 120 ms without.
CREATE OR REPLACE FUNCTION holds(x TEXT, t TEXT) RETURNS BOOLEAN LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS 'SELECT strpos(x, t) > 0 OR strpos(lower(x COLLATE "C"), lower(t COLLATE "C")) > 0';
