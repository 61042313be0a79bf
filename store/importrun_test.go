package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"assay"
	"assay/store"
	"assay/tally"
)

// runImport is an imported run of five samples under one condition, twice,
// whose results stop with failAt's error when failAt > 0; seen, when set,
// is called before each result is given.
func runImport(failAt int, seen func(imp *store.RunImport, n int)) *store.RunImport {
	imp := &store.RunImport{
		Dataset: store.Dataset{Name: "imported", Kind: assay.KindQA, SHA256: "sha-imported", Format: "jsonl"},
		Run: store.Run{Name: "k-eval run", Repetitions: 2, TotalTasks: 10,
			Conditions: []assay.Condition{{Name: "baseline"}}},
		Results:  10,
		Finished: time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
	}
	for i := 1; i <= 5; i++ {
		imp.Samples = append(imp.Samples, store.Sample{Ordinal: i, SampleID: fmt.Sprint(i), Input: fmt.Sprintf("What is %d + %d?", i, i), Reference: fmt.Sprint(2 * i)})
	}
	imp.EachResult = func(fn func(r *store.Result, ordinal int) error) error {
		n := 0
		for i := 1; i <= 5; i++ {
			for rep := 1; rep <= 2; rep++ {
				n++
				if seen != nil {
					seen(imp, n)
				}
				if n == failAt {
					return errors.New("the instances file could not be read")
				}
				r := &store.Result{Condition: "baseline", Repetition: rep, Response: "answer", Judgements: []store.Judgement{
					{Evaluator: "rubric", Scores: []store.Score{{Metric: "completeness", Value: float64(1 + n%5)}}}}}
				if err := fn(r, i); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return imp
}

// An import stores its results a few per transaction, the run hidden
// until the last, and left to its process by another that opens the
// database; one that fails leaves nothing, nor the dataset made for it.
func TestImportRunABatchAtATime(t *testing.T) {
	defer func(n int) { *store.ImportBatch = n }(*store.ImportBatch)
	*store.ImportBatch = 3
	ctx := context.Background()
	db := openTestDB(t)
	raw, err := store.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	hidden := 0
	imp := runImport(0, func(imp *store.RunImport, n int) {
		if n != 4 { // a batch of three committed, the next not begun
			return
		}
		// Another process opening the database leaves the import to this one.
		other, err := tally.Open(ctx, db.Path)
		if err != nil {
			t.Fatal(err)
		}
		var status string
		if err := raw.QueryRow(`SELECT status FROM runs WHERE id = ?`, imp.Run.ID).Scan(&status); err != nil || status != "importing" {
			t.Errorf("another process opened the database: the run is %q (%v)", status, err)
		}
		other.Close()
		if _, err := db.Run(ctx, imp.Run.ID); errors.Is(err, assay.ErrNotFound) {
			hidden++
		}
		if list, err := tally.Of(db).Runs(ctx); err == nil && len(list) == 0 {
			hidden++
		}
		if c := counts(t, raw, imp.Run.ID); c["results"] == 3 {
			hidden++
		}
	})
	created, err := db.ImportRun(ctx, imp)
	if err != nil || !created {
		t.Fatalf("import: %v (dataset created %v)", err, created)
	}
	if hidden != 3 {
		t.Errorf("while the import went on, %d of 3 checks found the run hidden with a batch stored", hidden)
	}
	run, err := db.Run(ctx, imp.Run.ID)
	if err != nil || run.Status != store.RunCompleted || run.Origin != store.OriginEEE || run.FinishedAt == nil || !run.FinishedAt.Equal(imp.Finished) {
		t.Fatalf("the imported run: %+v %v", run, err)
	}
	if c := counts(t, raw, run.ID); c["results"] != 10 || c["scores"] != 10 || c["sample_sums"] != 5 {
		t.Errorf("the imported run holds %v", c)
	}

	failed := runImport(8, nil)
	failed.Dataset.SHA256 = "sha-failed"
	if _, err := db.ImportRun(ctx, failed); err == nil {
		t.Fatal("an import whose results failed was stored")
	}
	for table, n := range counts(t, raw, failed.Run.ID) {
		if n != 0 {
			t.Errorf("%d rows of the failed import left in %s", n, table)
		}
	}
	if list, err := db.Datasets(ctx); err != nil || len(list) != 1 || list[0].ID != run.DatasetID {
		t.Errorf("the datasets after a failed import: %+v %v", list, err)
	}
}
