package runner_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"assay/runner/llm/llmtest"
	"assay/store"
)

// A worker goes on with its next task while its last result waits to be
// committed: a slow disk holds up the count of finished tasks, not the
// calls. With the database locked by another writer, the second task's
// calls are made before the first result is stored, and nothing is counted
// done until the lock goes.
func TestNextTaskDoesNotWaitForTheCommit(t *testing.T) {
	// Each call takes long enough to take the lock during the first.
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(300*time.Millisecond))
	cfg := f.config(f.qaDataset(3), "")
	cfg.Execution.NumRepetitions, cfg.Execution.MaxConcurrent = 1, 1
	run := f.launch(cfg)

	lock, err := sql.Open("sqlite", filepath.Join(f.dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	conn, err := lock.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	type outcome struct {
		status store.RunStatus
		err    error
	}
	ended := make(chan outcome, 1)
	go func() {
		status, err := f.m.Execute(context.Background(), run.ID)
		ended <- outcome{status, err}
	}()
	waitFor(t, func() bool { return len(f.srv.Requests()) > 0 })
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// The store waits 10 s for a lock before it fails a write: release it
	// well before, whatever happened.
	deadline := time.Now().Add(6 * time.Second)
	for len(f.srv.Requests()) < 4 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	calls := len(f.srv.Requests())
	results, _ := f.db.Results(context.Background(), run.ID)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if calls < 4 {
		t.Errorf("%d calls while the first result waited for its commit; want the second task's two as well", calls)
	}
	if len(results) != 0 {
		t.Errorf("%d results stored while the database was locked", len(results))
	}
	o := <-ended
	if o.err != nil || o.status != store.RunCompleted {
		t.Fatalf("status %s, err %v", o.status, o.err)
	}
	if results, _ = f.db.Results(context.Background(), run.ID); len(results) != 6 {
		t.Errorf("%d results after the lock, want 6", len(results))
	}
}
