package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"assay"
	"assay/internal/storetest"
	"assay/store"
	"assay/tally"
)

// Runs made by assay run are indexed for search when assay serve starts,
// not at the first search of each: the searches a person makes then find
// the index whole.
func TestServeIndexesRunsMadeByAssayRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := tally.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	d := &store.Dataset{Name: "questions", Kind: assay.KindQA, SHA256: "feed", Format: "jsonl"}
	var samples []store.Sample
	for i := range 700 {
		samples = append(samples, store.Sample{Ordinal: i + 1, SampleID: fmt.Sprint("q", i), Input: "What is 2 + 2?", Reference: "4"})
	}
	if _, err := db.CreateDataset(ctx, d, samples); err != nil {
		t.Fatal(err)
	}
	// 2,100 results: past what a search leaves for the index to catch up.
	run := &store.Run{DatasetID: d.ID, Repetitions: 3, TotalTasks: 2100, Conditions: []assay.Condition{{Name: "baseline"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	storetest.FinishTasks(t, db, run, "The answer is 4.")
	if err := db.SetRunStatus(ctx, run.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	db.Close()

	state := func() (through, last int64) { return storetest.IndexState(t, path) }
	if through, _ := state(); through != 0 {
		t.Fatalf("indexed through result %d before the server started", through)
	}
	startServer(t, "--db", path)
	deadline := time.Now().Add(60 * time.Second)
	for through, last := state(); through != last; through, last = state() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the server started, the index reaches result %d of %d", through, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
