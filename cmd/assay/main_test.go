package main

import (
	"os"
	"testing"

	"assay/internal/pgtest"
)

// TestMain stops the Postgres cluster the tests started, if any: the
// crash tests run against Postgres too (make test).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
