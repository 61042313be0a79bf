package store

import (
	"os"
	"testing"

	"assay/internal/pgtest"
)

// TestMain stops the Postgres cluster the tests started, if any.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// onPostgres is set (ASSAY_TEST_STORE=postgres) to run the store's tests
// against a throwaway Postgres rather than SQLite files: make test runs
// them both ways.
var onPostgres = pgtest.OnPostgres()

// testDatabase is where a test's database is: a new Postgres database, or
// a SQLite file in the test's folder.
func testDatabase(t testing.TB) string { return pgtest.Database(t) }

// sqliteOnly skips a test of what SQLite alone has (its file, its page
// size, its migrations from before Postgres was a store) when the suite
// runs against Postgres, saying so.
func sqliteOnly(t testing.TB) {
	t.Helper()
	pgtest.SQLiteOnly(t, "its file, page size, response index or older schemas")
}
