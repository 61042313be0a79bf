-- Postgres's holds() looks for the text as it is first
-- (migrations_pg/0047); SQLite's is store/holds.go.
SELECT 1;
