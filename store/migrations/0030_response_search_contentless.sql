-- Deleting a run deleted each of its results from the response index
-- (0023) with FTS5's 'delete', which reads the response and tokenizes it
-- again to find the entries to remove: half of the 35 s a 150,000-result
-- run took to delete, every write of the database waiting meanwhile. The
-- index is now contentless with contentless_delete (SQLite 3.43): a row is
-- deleted by its id. It never held the text (a search reads it from
-- results), so nothing else changes; it is built again in the background
-- from indexed_through 0, searches scanning what it lacks meanwhile.
DROP TRIGGER results_search_insert;
DROP TRIGGER results_search_delete;
DROP TRIGGER results_search_update;
DROP TABLE response_search;

CREATE VIRTUAL TABLE response_search USING fts5 (
    response,
    content = '',
    contentless_delete = 1,
    tokenize = 'trigram case_sensitive 0',
    detail = none
);
UPDATE response_search_state SET indexed_through = 0;

CREATE TRIGGER results_search_insert AFTER INSERT ON results
    WHEN new.response != '' AND new.id <= (SELECT indexed_through FROM response_search_state) BEGIN
    INSERT INTO response_search (rowid, response) VALUES (new.id, new.response);
END;

CREATE TRIGGER results_search_delete AFTER DELETE ON results
    WHEN old.response != '' AND old.id <= (SELECT indexed_through FROM response_search_state) BEGIN
    DELETE FROM response_search WHERE rowid = old.id;
END;

CREATE TRIGGER results_search_update AFTER UPDATE OF response ON results
    WHEN old.id <= (SELECT indexed_through FROM response_search_state) BEGIN
    DELETE FROM response_search WHERE rowid = old.id AND old.response != '';
    INSERT INTO response_search (rowid, response) SELECT new.id, new.response WHERE new.response != '';
END;
