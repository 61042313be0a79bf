package store

import (
	"database/sql"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// DeleteBatch is how many results a transaction of a run's deletion
// deletes, for tests to make it small.
var DeleteBatch = &deleteBatch

// ImportBatch is how many results a transaction of an import stores.
var ImportBatch = &importBatch

// SamplesPerDelete is how many samples a statement of a dataset's deletion deletes.
var SamplesPerDelete = &samplesPerDelete

// OpenRaw opens a database at path as database/sql does, without the
// store, for tests to read and change rows behind its back: SQLite's
// driver, or Postgres's taking the store's placeholders.
func OpenRaw(path string) (*sql.DB, error) {
	if IsPostgres(path) {
		cfg, err := pgx.ParseConfig(path)
		if err != nil {
			return nil, err
		}
		return sql.OpenDB(rebinding{stdlib.GetConnector(*cfg)}), nil
	}
	return sql.Open("sqlite", path)
}
