-- A text search of the samples table looks for its text in every response
-- of a run: a scan of a 150,000-result run reads 120 MB. This index of
-- each response's trigrams (SQLite FTS5's trigram tokenizer, which answers
-- LIKE '%text%' for three characters or more, ignoring case as LIKE does)
-- finds them without the scan. It holds no copy of the text: it reads it
-- from results, and the triggers keep it in step with every insert and
-- delete of a result, in the same transaction.
CREATE VIRTUAL TABLE response_search USING fts5 (
    response,
    content = 'results',
    content_rowid = 'id',
    tokenize = 'trigram case_sensitive 0',
    detail = none,
    columnsize = 0
);

CREATE TRIGGER results_search_insert AFTER INSERT ON results WHEN new.response != '' BEGIN
    INSERT INTO response_search (rowid, response) VALUES (new.id, new.response);
END;

CREATE TRIGGER results_search_delete AFTER DELETE ON results WHEN old.response != '' BEGIN
    INSERT INTO response_search (response_search, rowid, response) VALUES ('delete', old.id, old.response);
END;

CREATE TRIGGER results_search_update AFTER UPDATE OF response ON results BEGIN
    INSERT INTO response_search (response_search, rowid, response) SELECT 'delete', old.id, old.response WHERE old.response != '';
    INSERT INTO response_search (rowid, response) SELECT new.id, new.response WHERE new.response != '';
END;

INSERT INTO response_search (rowid, response) SELECT id, response FROM results WHERE response != '';
