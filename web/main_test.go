package web_test

import (
	"os"
	"testing"

	"assay/internal/pgtest"
)

// TestMain stops the Postgres cluster the benchmarks started, if any
// (ASSAY_TEST_STORE=postgres gives their figures against Postgres).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
