-- A trigram index of the responses, for searches of a run's samples: pg_trgm
-- answers ILIKE '%text%' through it. An installation that may not create
-- the extension goes without: searches then read the responses.
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'pg_trgm is not available (%): searches read the responses', SQLERRM;
END $$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        EXECUTE 'CREATE INDEX results_response_trigrams ON results USING gin (response gin_trgm_ops)';
    END IF;
END $$;
