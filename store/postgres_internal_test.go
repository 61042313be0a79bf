package store

import (
	"assay/internal/pgtest"
	"context"
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
	} {
		got := Redacted(dsn)
		if strings.Contains(got, "hunter2") || !strings.Contains(got, "db.example") || !strings.Contains(got, "assay") {
			t.Errorf("Redacted(%q) = %q", dsn, got)
		}
	}
	if got := Redacted("runs/assay.db"); got != "runs/assay.db" {
		t.Errorf("a file's path is shown as it is: %q", got)
	}
}

// A server that does not answer is said at once, naming where, without
// the password.
func TestOpenUnreachablePostgres(t *testing.T) {
	_, err := Open(context.Background(), "postgres://assay:hunter2@127.0.0.1:1/assay?sslmode=disable&connect_timeout=5")
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("open of an unreachable server: %v", err)
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
