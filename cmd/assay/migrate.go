package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"assay"
	"assay/store"
	"assay/tally"
)

// cmdMigrate copies a SQLite database whole into a new Postgres one: a
// team's server moving off the file it began with. It exits 0, or 1 with
// the reason, a mistaken command line included.
func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", stderr)
	from := fs.String("from", "", "the SQLite database file to copy (required)")
	to := fs.String("to", "", "the Postgres database to copy it into, empty: postgres://USER@HOST:PORT/DB?sslmode=… (required)")
	asJSON := fs.Bool("json", false, `print the rows copied by table: {"runs", "results", "scores", "reviews", …}`)
	if err := parseFlags(fs, args); err != nil {
		var e *exitError
		if errors.As(err, &e) {
			e.code = 1 // migrate exits 0, or 1 with the reason
		}
		return err
	}
	switch {
	case *from == "" || *to == "":
		return &exitError{code: 1, err: fmt.Errorf("migrate: --from F.db and --to postgres://… are required")}
	case store.IsPostgres(*from):
		return &exitError{code: 1, err: fmt.Errorf("migrate: --from names a SQLite file, not %s", store.Redacted(*from))}
	case !store.IsPostgres(*to):
		return &exitError{code: 1, err: fmt.Errorf("migrate: --to names a Postgres database (postgres://…), not %s", *to)}
	}
	if err := dbExists(*from); err != nil {
		return &exitError{code: 1, err: fmt.Errorf("migrate: %w", err)}
	}
	start := time.Now()
	src, err := tally.Open(ctx, *from)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("migrate: %w", err)}
	}
	defer src.Close()
	dst, err := tally.Open(ctx, *to)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("migrate: %w", err)}
	}
	defer dst.Close()
	counts, err := src.CopyTo(ctx, dst)
	if err != nil {
		if assay.ErrorCode(err) == assay.ECONFLICT {
			return &exitError{code: 1, err: fmt.Errorf("migrate: %s", assay.ErrorMessage(err))}
		}
		return &exitError{code: 1, err: fmt.Errorf("migrate: %w", err)}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(counts)
	}
	fmt.Fprintf(stdout, "copied %s into %s in %s: %d runs, %d results, %d judgements, %d scores, %d reviews, %d datasets, %d samples, %d tokens\n",
		*from, store.Redacted(*to), time.Since(start).Round(time.Millisecond), counts["runs"], counts["results"], counts["judgements"],
		counts["scores"], counts["reviews"], counts["datasets"], counts["samples"], counts["tokens"])
	return nil
}
