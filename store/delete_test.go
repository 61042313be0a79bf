package store_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"assay"
	"assay/internal/pgtest"
	"assay/store"
	"assay/tally"
)

// counts is how many rows hang from a run in each table.
func counts(t *testing.T, raw *sql.DB, runID int64) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, table := range []string{"results", "judgements", "scores", "sample_sums", "sample_scores", "condition_totals", "model_totals", "run_conditions", "sample_stats_kept", "report_scores_kept"} {
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM `+table+` WHERE run_id = ?`, runID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	var n int
	if err := raw.QueryRow(`SELECT count(*) FROM runs WHERE id = ?`, runID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	out["runs"] = n
	return out
}

// A run's deletion, a few results per transaction, leaves nothing of it
// and takes nothing of another run.
func TestDeleteRunABatchAtATime(t *testing.T) {
	defer func(n int) { *store.DeleteBatch = n }(*store.DeleteBatch)
	*store.DeleteBatch = 7
	ctx := context.Background()
	db := openTestDB(t)
	keep := seedRun(t, db, 5, 2, "a")
	gone := seedRun(t, db, 12, 2, "a", "b")
	raw, err := store.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := db.SetRunStatus(ctx, gone.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := tally.Of(db).IndexResponses(ctx); err != nil {
		t.Fatal(err)
	}
	countedPairs(t, db, gone.ID) // its samples table is made, and kept
	for deadline := time.Now().Add(10 * time.Second); counts(t, raw, gone.ID)["sample_stats_kept"] == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the finished run's samples table was not kept")
		}
	}
	kept := counts(t, raw, keep.ID)
	if before := counts(t, raw, gone.ID); before["results"] != 48 || before["scores"] == 0 || before["sample_sums"] == 0 {
		t.Fatalf("the run to delete holds %v", before)
	}
	if n, err := db.DeleteRun(ctx, gone.ID); err != nil || n != 48 {
		t.Fatalf("deleted %d results: %v", n, err)
	}
	for table, n := range counts(t, raw, gone.ID) {
		if n != 0 {
			t.Errorf("%d rows of the deleted run left in %s", n, table)
		}
	}
	for table, n := range counts(t, raw, keep.ID) {
		if n != kept[table] {
			t.Errorf("the other run's %s: %d rows, had %d", table, n, kept[table])
		}
	}
	// A search of the other run is right after it (the response index
	// emptied for a large run is readmodel/tally's).
	m, err := tally.Of(db).SearchSamples(ctx, keep.ID, keep.DatasetID, "answer")
	if err != nil || len(m.Responses(countedPairs(t, db, keep.ID))) != 5 {
		t.Errorf("a search of the other run found %d of its 5 samples: %v", len(m.Responses(countedPairs(t, db, keep.ID))), err)
	}
}

// A dataset's deletion, a few samples per statement, with its runs, leaves
// nothing of it and takes nothing of another dataset; deleting a sample
// finds the results that would still name it through an index, not by
// reading every result (a 2,000-sample dataset took 28 s to delete beside
// 150,000 results of another).
func TestDeleteDatasetAFewSamplesAtATime(t *testing.T) {
	defer func(n int) { *store.SamplesPerDelete = n }(*store.SamplesPerDelete)
	*store.SamplesPerDelete = 5
	ctx := context.Background()
	db := openTestDB(t)
	keep := seedRun(t, db, 6, 1, "a")
	gone := seedRun(t, db, 12, 1, "a")
	if err := db.SetRunStatus(ctx, gone.ID, store.RunCompleted, ""); err != nil {
		t.Fatal(err)
	}
	raw, err := store.OpenRaw(db.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	samples := func(dataset int64) (n int) {
		t.Helper()
		if err := raw.QueryRow(`SELECT count(*) FROM samples WHERE dataset_id = ?`, dataset).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	kept := counts(t, raw, keep.ID)
	if runs, err := db.DeleteDataset(ctx, gone.DatasetID, true); err != nil || runs != 1 {
		t.Fatalf("deleted %d runs: %v", runs, err)
	}
	if n := samples(gone.DatasetID); n != 0 {
		t.Errorf("%d samples of the deleted dataset left", n)
	}
	if n := samples(keep.DatasetID); n != 6 {
		t.Errorf("the other dataset has %d samples, had 6", n)
	}
	for table, n := range counts(t, raw, keep.ID) {
		if n != kept[table] {
			t.Errorf("the other dataset's run: %s has %d rows, had %d", table, n, kept[table])
		}
	}
	if pgtest.OnPostgres() {
		return // the plan below is SQLite's
	}
	var detail string
	var id, parent, unused int
	if err := raw.QueryRow(`EXPLAIN QUERY PLAN SELECT 1 FROM results WHERE sample_id = ?`, 1).Scan(&id, &parent, &unused, &detail); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(detail, "INDEX results_sample") {
		t.Errorf("the results naming a sample are found by %q, not through an index on sample_id", detail)
	}
}

// A run a stopped process left being deleted, or being imported, is
// hidden at once, and deleted when the database is opened again.
func TestARunLeftDeletingIsDeletedAtOpen(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t)
	keep := seedRun(t, db, 3, 1, "a")
	gone := seedRun(t, db, 20, 2, "a")
	importing := seedRun(t, db, 4, 1, "b")
	path := db.Path
	raw, err := store.OpenRaw(path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// What DeleteRun's first transaction does, the process then stopping.
	if _, err := raw.Exec(`UPDATE runs SET status = 'deleting' WHERE id = ?`, gone.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE runs SET status = 'importing' WHERE id = ?`, importing.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Run(ctx, importing.ID); !errors.Is(err, assay.ErrNotFound) {
		t.Errorf("a run being imported is shown: %v", err)
	}
	if _, err := db.Run(ctx, gone.ID); !errors.Is(err, assay.ErrNotFound) {
		t.Errorf("a run being deleted is shown: %v", err)
	}
	if list, err := tally.Of(db).Runs(ctx); err != nil || len(list) != 1 || list[0].ID != keep.ID {
		t.Errorf("the runs listed: %v %v", list, err)
	}
	if runs, err := db.DatasetRuns(ctx, gone.DatasetID, 0); err != nil || len(runs) != 0 {
		t.Errorf("the dataset's runs: %v %v", runs, err)
	}
	db.Close()
	again, err := tally.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for deadline := time.Now().Add(time.Minute); counts(t, raw, gone.ID)["runs"]+counts(t, raw, importing.ID)["runs"] != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("the run left deleting is still there: %v", counts(t, raw, gone.ID))
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, id := range []int64{gone.ID, importing.ID} {
		for table, n := range counts(t, raw, id) {
			if n != 0 {
				t.Errorf("%d rows of run %d left in %s", n, id, table)
			}
		}
	}
	if _, err := again.Run(ctx, keep.ID); err != nil {
		t.Errorf("the other run: %v", err)
	}
}
