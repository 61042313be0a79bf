package runner_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"assay/report"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A run that ends keeps its samples table: the first to open it, and each
// server started later, read it in one row instead of folding the run's
// results again. It is the table folded from them.
func TestEndedRunKeepsItsSamplesTable(t *testing.T) {
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(2*time.Millisecond))
	run := f.launch(f.config(f.qaDataset(6), ""))
	status, err := f.m.Execute(context.Background(), run.ID)
	if err != nil || status != store.RunCompleted {
		t.Fatalf("status %s, err %v", status, err)
	}
	raw, err := sql.Open("sqlite", filepath.Join(f.dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var count, kept int
	waitFor(t, func() bool {
		err := raw.QueryRow(`SELECT count(*), coalesce(sum(results_count), 0) FROM sample_stats_kept WHERE run_id = ?`, run.ID).Scan(&kept, &count)
		return err == nil && kept == 1
	})
	if count != 36 {
		t.Fatalf("the kept table is of %d results, want 36", count)
	}
	table, err := report.LoadSamples(context.Background(), f.db, run.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 12 || len(table.Metrics) != 3 {
		t.Fatalf("%d rows and %d metrics, want 12 rows (6 samples × 2 conditions) and 3", len(table.Rows), len(table.Metrics))
	}
	for _, r := range table.Rows {
		if r.Results != 3 || r.Claims != 3 || r.Metrics[0].N != 3 {
			t.Fatalf("sample %s under %s: %+v, want 3 results each with a claim and three scores", r.SampleID, r.Condition, r)
		}
	}
}
