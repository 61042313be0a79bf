package store

import (
	"assay/internal/pgtest"
	"context"
	"os"
	"strings"
	"testing"
)

// The store's statements, written with SQLite's placeholders, reach
// Postgres with its own: numbered as SQLite numbers them, text in quotes
// and comments left alone, index hints and SQLite's idioms in Postgres's
// words.
func TestPgText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?`, `a = $1 AND b = $2`},
		{`a = ?2 AND b = ?1 AND c = ?2`, `a = $2 AND b = $1 AND c = $2`},
		{`a = ?2 AND b = ?`, `a = $2 AND b = $3`},
		{`x = '?' AND y = ? -- why?` + "\n" + `AND z = ?`, `x = '?' AND y = $1 -- why?` + "\n" + `AND z = $2`},
		{`"col?" = ?`, `"col?" = $1`},
		{`SELECT a FROM results INDEXED BY results_errors WHERE x = ?`, `SELECT a FROM results WHERE x = $1`},
		{`id IN (SELECT value FROM json_each(?))`, `id IN (SELECT value::bigint FROM json_array_elements_text($1::json))`},
	} {
		if got := pgText(c.in); got != c.want {
			t.Errorf("pgText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A DSN printed, logged or shown never carries its password.
func TestRedactedHidesThePassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://assay:hunter2@db.example:5432/assay?sslmode=require",
		"postgresql://assay@db.example/assay?password=hunter2&sslmode=disable",
		"host=db.example user=assay password=hunter2 dbname=assay sslmode=disable",
		"host=db.example user=assay password = 'hunter2 and \\'more' dbname=assay",
	} {
		if !IsPostgres(dsn) {
			t.Errorf("%q is not taken for Postgres", dsn)
		}
		got := Redacted(dsn)
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "db.example") || !strings.Contains(got, "assay") {
			t.Errorf("Redacted(%q) = %q", dsn, got)
		}
	}
	for _, file := range []string{"runs/assay.db", "a=b.db", "my host=1.db"} {
		if IsPostgres(file) {
			t.Errorf("the file %q is taken for Postgres", file)
		}
	}
	if got := Redacted("runs/assay.db"); got != "runs/assay.db" {
		t.Errorf("a file's path is shown as it is: %q", got)
	}
}

// A server that does not answer is said at once, naming where, without
// the password.
// A DSN in libpq's keyword form is a Postgres database, not a SQLite file
// named after it (whose name held the password).
func TestOpenUnreachablePostgres(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, dsn := range []string{
		"postgres://assay:hunter2@127.0.0.1:1/assay?sslmode=disable&connect_timeout=5",
		"host=127.0.0.1 port=1 user=assay password=hunter2 dbname=assay sslmode=disable connect_timeout=5",
	} {
		_, err := Open(context.Background(), dsn)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("open of an unreachable server: %v", err)
		}
	}
	if files, _ := os.ReadDir("."); len(files) != 0 {
		t.Errorf("opening a DSN made %d files, the first %q", len(files), files[0].Name())
	}
}

// A wrong password is said at once, without the password.
func TestOpenWithAWrongPassword(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("needs the tests' Postgres: runs when the suite runs against it (make test does)")
	}
	dsn := strings.Replace(pgtest.Database(t), ":"+pgtest.Password+"@", ":not-the-password@", 1)
	_, err := Open(context.Background(), dsn)
	if err == nil || !strings.Contains(err.Error(), "password authentication failed") || strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("open with a wrong password: %v", err)
	}
}

// SQLite's placeholders become Postgres's as SQLite numbers them, and a
// ? inside quotes or a comment is text, not a placeholder.
func TestRebindNumbersPlaceholdersAsSQLiteDoes(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`a = ? AND b = ?`, `a = $1 AND b = $2`},
		{`VALUES (?1, ?3, ?2), (?1, ?, ?2)`, `VALUES ($1, $3, $2), ($1, $4, $2)`},
		{`x = '?' AND y = ?`, `x = '?' AND y = $1`},
		{`"a?b" = ?`, `"a?b" = $1`},
		{"a = ? -- why?\nAND b = ?", "a = $1 -- why?\nAND b = $2"},
		{`a = ? -- the end?`, `a = $1 -- the end?`},
		{`x = 'unclosed ?`, `x = 'unclosed ?`},
	} {
		if got := rebind(c.in); got != c.want {
			t.Errorf("rebind(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
