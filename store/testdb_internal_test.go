package store

import (
	"os"
	"testing"

	"assay/internal/pgtest"
)

// TestMain stops the Postgres cluster the tests started, if any: with
// ASSAY_TEST_STORE=postgres (make test's second pass) every test's
// database is a Postgres one (pgtest.Database).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
