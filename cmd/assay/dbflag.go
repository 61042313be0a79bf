package main

import (
	"errors"
	"flag"
	"os"

	"assay/store"
)

// dbFlag adds --db to a subcommand: a SQLite file, or a Postgres
// database named by its DSN; ASSAY_DB in the environment is its default.
// Help shows the default without a DSN's password.
func dbFlag(fs *flag.FlagSet) *string {
	p := new(string)
	*p = envOr("ASSAY_DB", "assay.db")
	fs.Var(dbValue{p}, "db", "the `database`: a SQLite file, or postgres://USER@HOST:PORT/DB?sslmode=… (default from ASSAY_DB when set)")
	return p
}

type dbValue struct{ p *string }

func (v dbValue) String() string {
	if v.p == nil {
		return ""
	}
	return store.Redacted(*v.p)
}

func (v dbValue) Set(s string) error {
	if s == "" {
		return errors.New("empty: name a SQLite file or a postgres:// DSN")
	}
	*v.p = s
	return nil
}

// dbExists is nil when --db names a database there is: a file that
// exists, or any Postgres DSN (its server says whether it answers).
func dbExists(path string) error {
	if store.IsPostgres(path) {
		return nil
	}
	_, err := os.Stat(path)
	return err
}
