-- A text search of the samples table looks for its text in every response
-- of a run: a scan of a 150,000-result run reads 120 MB. This index of
-- each response's trigrams (SQLite FTS5's trigram tokenizer, which answers
-- LIKE '%text%' for three characters or more, ignoring case as LIKE does)
-- finds them without the scan. It holds no copy of the text: it reads it
-- from results.
--
-- Results are not indexed as they commit, which would cost a running run
-- a fifth of its CPU: the index catches up in the background, in batches,
-- when a search meets many results it lacks (store/searchindex.go), and a
-- search scans the results past indexed_through itself.
CREATE VIRTUAL TABLE response_search USING fts5 (
    response,
    content = 'results',
    content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0',
    detail = none,
    columnsize = 0
);

-- Every result with a response and an id up to indexed_through is indexed.
CREATE TABLE response_search_state (
    id               INTEGER PRIMARY KEY CHECK (id = 1),
    indexed_through  INTEGER NOT NULL
);
INSERT INTO response_search_state (id, indexed_through) VALUES (1, 0);

-- A result stored under an id the index has passed (the highest ids, freed
-- when failed results are cleared, are given again) is indexed at once.
CREATE TRIGGER results_search_insert AFTER INSERT ON results
    WHEN new.response != '' AND new.id <= (SELECT indexed_through FROM response_search_state) BEGIN
    INSERT INTO response_search (rowid, response) VALUES (new.id, new.response);
END;

CREATE TRIGGER results_search_delete AFTER DELETE ON results
    WHEN old.response != '' AND old.id <= (SELECT indexed_through FROM response_search_state) BEGIN
    INSERT INTO response_search (response_search, rowid, response) VALUES ('delete', old.id, old.response);
END;

CREATE TRIGGER results_search_update AFTER UPDATE OF response ON results
    WHEN old.id <= (SELECT indexed_through FROM response_search_state) BEGIN
    INSERT INTO response_search (response_search, rowid, response) SELECT 'delete', old.id, old.response WHERE old.response != '';
    INSERT INTO response_search (rowid, response) SELECT new.id, new.response WHERE new.response != '';
END;
