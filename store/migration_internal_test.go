package store

import (
	"context"
	"path/filepath"
	"testing"

	"assay"
	"assay/internal/pgtest"
)

// Migration 0022 copies the datasets table to change its unique key: every
// dataset, sample, run and result stored before stays, with its ids, and
// the tables that refer to datasets still do (deleting one still cascades).
func TestDatasetIdentityMigrationKeepsEverything(t *testing.T) {
	pgtest.SQLiteOnly(t, "its migrations from before Postgres was a store")
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "assay.db")
	db, err := open(ctx, path, "0021", nil)
	if err != nil {
		t.Fatal(err)
	}
	var samples []Sample
	for i := 1; i <= 4; i++ {
		samples = append(samples, Sample{Ordinal: i, SampleID: string(rune('a' + i)), Input: "q", Reference: "r"})
	}
	d := &Dataset{Name: "golden", Kind: assay.KindQA, SHA256: "feed", Format: "jsonl", Size: 40}
	if _, err := db.CreateDataset(ctx, d, samples); err != nil {
		t.Fatal(err)
	}
	rows, _ := db.Samples(ctx, d.ID, 0, 0)
	run := &Run{DatasetID: d.ID, Repetitions: 1, TotalTasks: 4, Conditions: []assay.Condition{{Name: "baseline"}}}
	if err := db.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	r := &Result{RunID: run.ID, SampleRow: rows[0].ID, Condition: "baseline", Repetition: 1, Response: "r",
		Judgements: []Judgement{{Evaluator: "exact_match", Scores: []Score{{Metric: "exact_match", Value: 1}}}}}
	saveAt(t, db, r)
	if _, err := db.write.Exec(`INSERT INTO judgements (result_id, run_id, evaluator) VALUES (?, ?, 'exact_match')`, r.ID, run.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.Exec(`INSERT INTO scores (judgement_id, result_id, run_id, metric, value)
		VALUES (last_insert_rowid(), ?, ?, 'exact_match', 1)`, r.ID, run.ID); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.Dataset(ctx, d.ID)
	if err != nil || got.Name != "golden" || got.SHA256 != "feed" || got.Samples != 4 {
		t.Fatalf("dataset after the migration: %+v, %v", got, err)
	}
	if n := sampleCount(t, db, d.ID); n != 4 {
		t.Errorf("%d samples after the migration, want 4", n)
	}
	var scores int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM scores WHERE run_id = ?`, run.ID).Scan(&scores); err != nil || scores != 1 {
		t.Fatalf("the run's scores after the migration: %d, %v", scores, err)
	}
	var broken int
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM pragma_foreign_key_check`).Scan(&broken); err != nil || broken > 0 {
		t.Errorf("foreign key check: %d broken, %v", broken, err)
	}
	var on int
	if err := db.write.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&on); err != nil || on != 1 {
		t.Errorf("foreign keys are %d after the migration, want on", on)
	}
	other := &Dataset{Name: "golden as math", Kind: assay.KindMath, SHA256: "feed", Format: "jsonl", Size: 40}
	if created, err := db.CreateDataset(ctx, other, samples); err != nil || !created {
		t.Fatalf("the same bytes read as math: created %v, %v", created, err)
	}
	if _, err := db.write.ExecContext(ctx, `DELETE FROM datasets WHERE id = ?`, other.ID); err != nil {
		t.Fatal(err)
	}
	if n := sampleCount(t, db, other.ID); n != 0 {
		t.Errorf("deleting a dataset left %d of its samples: the cascade is gone", n)
	}
}

func sampleCount(t *testing.T, db *DB, dataset int64) int {
	t.Helper()
	var n int
	if err := db.read.QueryRow(`SELECT count(*) FROM samples WHERE dataset_id = ?`, dataset).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
