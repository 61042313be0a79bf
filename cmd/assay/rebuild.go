package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"assay"
	"assay/tally"
)

// rebuilt is one run rebuilt, as --json prints it.
type rebuilt struct {
	RunID   int64 `json:"run_id"`
	Results int   `json:"results"`
}

// cmdRebuild computes again everything kept from the record of one run or
// of every run: what it shows afterwards is what it showed before.
func cmdRebuild(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rebuild", stderr)
	runID := fs.Int64("run", 0, "the run to rebuild (default: every run)")
	dbPath := dbFlag(fs)
	asJSON := fs.Bool("json", false, `print {"runs": [{"run_id", "results"}], "skipped": [...]}`)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := dbExists(*dbPath); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	db, err := tally.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	ids := []int64{*runID}
	if *runID == 0 {
		if ids, err = db.RunIDs(ctx); err != nil {
			return err
		}
	}
	out := struct {
		Runs    []rebuilt `json:"runs"`
		Skipped []int64   `json:"skipped"`
	}{Runs: []rebuilt{}, Skipped: []int64{}}
	for _, id := range ids {
		n, err := db.RebuildRun(ctx, id)
		if assay.ErrorCode(err) == assay.ECONFLICT && *runID == 0 {
			// A run under way keeps its own tallies: left to its process.
			fmt.Fprintf(stderr, "rebuild: skipped: %s\n", assay.ErrorMessage(err))
			out.Skipped = append(out.Skipped, id)
			continue
		} else if err != nil {
			return fmt.Errorf("rebuild: %w", err)
		}
		out.Runs = append(out.Runs, rebuilt{RunID: id, Results: n})
		if !*asJSON {
			fmt.Fprintf(stdout, "rebuilt run %d: %d results\n", id, n)
		}
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			return err
		}
	}
	if len(out.Skipped) > 0 {
		return &exitError{code: 1, err: fmt.Errorf("rebuild: %d runs under way were skipped; rebuild them when they end", len(out.Skipped))}
	}
	return nil
}
