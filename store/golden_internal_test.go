package store

import (
	"context"
	"fmt"
	"testing"

	"assay"
	"assay/internal/pgtest"
)

// goldenRun opens a database for the test (its record alone) and stores a
// dataset of n samples, s0 to s{n-1}, and a run over it with those
// conditions and repetitions.
func goldenRun(t *testing.T, n, repetitions int, conditions ...string) (*DB, *Run, []Sample) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d := &Dataset{Name: "golden", Kind: assay.KindQA, SHA256: "feed", Format: "jsonl"}
	var samples []Sample
	for i := range n {
		samples = append(samples, Sample{Ordinal: i + 1, SampleID: fmt.Sprint("s", i), Input: "q", Reference: "r"})
	}
	if _, err := db.CreateDataset(ctx, d, samples); err != nil {
		t.Fatal(err)
	}
	rows, err := db.Samples(ctx, d.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	run := &Run{DatasetID: d.ID, Repetitions: repetitions, TotalTasks: n * repetitions * len(conditions)}
	for _, c := range conditions {
		run.Conditions = append(run.Conditions, assay.Condition{Name: c})
	}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	return db, run, rows
}

// saveAt stores a result (scores left out) in a database opened at any
// version from 0019 on: by hand when it was opened at an older one (open's
// upTo), which the statements of the current schema may not fit.
func saveAt(t *testing.T, db *DB, r *Result) {
	t.Helper()
	if db.stmts.m != nil {
		if _, err := db.SaveResult(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		return
	}
	res, err := db.write.Exec(`INSERT INTO results (run_id, sample_id, condition, repetition, response, error, error_kind, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.RunID, r.SampleRow, r.Condition, r.Repetition, r.Response, r.Error, kindOf(r.Error, r.ErrorKind),
		db.nowText())
	if err == nil {
		r.ID, err = res.LastInsertId()
	}
	if err == nil { // as the store kept them from migration 0019 on
		_, err = db.write.Exec(`UPDATE runs SET results_count = results_count + 1, results_last = max(results_last, ?)
			WHERE id = ?`, r.ID, r.RunID)
	}
	if err != nil {
		t.Fatal(err)
	}
}
