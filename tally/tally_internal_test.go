package tally

import (
	"database/sql"
	"os"
	"strings"
	"sync"
	"testing"

	"assay/internal/pgtest"
	"assay/store"
)

// TestMain stops the Postgres cluster the tests started, if any: with
// ASSAY_TEST_STORE=postgres (make test's second pass) every test's
// database is a Postgres one (pgtest.Database).
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// rawDBs are the connections rawDB opened, by test and database.
var rawDBs sync.Map

// rawDB opens the test's database as database/sql does, beside the
// store, to change rows behind its back: one connection per test and
// database (last_insert_rowid() is the connection's), closed with the test.
func rawDB(t *testing.T, db *store.DB) *sql.DB {
	t.Helper()
	key := t.Name() + "\x00" + db.Path
	if raw, ok := rawDBs.Load(key); ok {
		return raw.(*sql.DB)
	}
	raw, err := store.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	raw.SetMaxOpenConns(1)
	rawDBs.Store(key, raw)
	t.Cleanup(func() {
		rawDBs.Delete(key)
		raw.Close()
	})
	return raw
}

// likePattern is the LIKE pattern (ESCAPE '\') that finds text anywhere.
func likePattern(text string) string {
	return "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(text) + "%"
}

// holdsFold says whether x holds text, ASCII letters of either case
// matching, as LIKE does: the search's answer, computed another way.
func holdsFold(x, text string) bool {
	return strings.Contains(asciiLower(x), asciiLower(text))
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
