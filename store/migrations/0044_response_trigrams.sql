-- Postgres's trigram index of the responses (migrations_pg/0044); SQLite
-- has its own since 0023.
SELECT 1;
