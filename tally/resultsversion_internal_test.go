package tally

import (
	"context"
	"path/filepath"
	"testing"

	"assay"
	"assay/store"
)

// The version a run keeps of its results follows them: each one saved
// counts, a repeated task does not, clearing failed ones uncounts them,
// and their retry is a version never seen before, though its result may
// take the id of the one cleared.
func TestResultsVersionFollowsResults(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ds := &store.Dataset{Name: "d", Kind: assay.KindQA, SHA256: "x", Format: "jsonl", Samples: 2}
	if _, err := db.CreateDataset(ctx, ds, []store.Sample{{Ordinal: 1, SampleID: "a", Input: "q", Reference: "r"}, {Ordinal: 2, SampleID: "b", Input: "q", Reference: "r"}}); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, ds.ID, 0, 0)
	run := &store.Run{Name: "r", DatasetID: ds.ID, Repetitions: 1, TotalTasks: 2, Conditions: []assay.Condition{{Name: "c"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	seen := map[ResultsVersion]bool{}
	check := func(wantCount int, wantLast int64) {
		t.Helper()
		v, err := Of(db).ResultsVersion(ctx, run.ID)
		if err != nil || v.Count != wantCount || v.Last != wantLast {
			t.Fatalf("version %+v (%v), want %d/%d", v, err, wantCount, wantLast)
		}
		if seen[v] {
			t.Fatalf("version %+v again, with other results", v)
		}
		seen[v] = true
	}
	check(0, 0)
	first := &store.Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "c", Repetition: 1, Response: "x"}
	db.SaveResult(ctx, first)
	again := &store.Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "c", Repetition: 1, Response: "y"}
	if saved, _ := db.SaveResult(ctx, again); saved {
		t.Fatal("a task saved twice")
	}
	check(1, first.ID)
	failed := &store.Result{RunID: run.ID, SampleRow: rows[1].ID, Condition: "c", Repetition: 1, Error: "boom"}
	db.SaveResult(ctx, failed)
	check(2, failed.ID)
	db.SetRunStatus(ctx, run.ID, store.RunCompleted, "")
	if _, err := db.ClearFailedTasks(ctx, run.ID); err != nil {
		t.Fatal(err)
	}
	check(1, failed.ID)
	db.SetRunStatus(ctx, run.ID, store.RunRunning, "")
	retried := &store.Result{RunID: run.ID, SampleRow: rows[1].ID, Condition: "c", Repetition: 1, Response: "fine"}
	if saved, err := db.SaveResult(ctx, retried); !saved || err != nil {
		t.Fatalf("the retry was not saved: %v", err)
	}
	check(2, retried.ID)
}
