package runner_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// A worker goes on with its next tasks while its results wait to be
// committed: a slow disk holds up the count of finished tasks, not the
// calls. With the database locked by another writer from the first call
// on, a worker makes the calls of nine tasks (eight results awaiting their
// commit, the ninth waiting to join them) and no more, and nothing is
// counted done until the lock goes.
func TestNextTaskDoesNotWaitForTheCommit(t *testing.T) {
	pgtest.SQLiteOnly(t, "a lock on the database file")
	var conn *sql.Conn
	var locked sync.Once
	lockFirst := func(next llmtest.Handler) llmtest.Handler {
		return func(req *llmtest.ChatRequest) llmtest.Reply {
			locked.Do(func() {
				if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
					t.Error(err)
				}
			})
			return next(req)
		}
	}
	f := newFixture(t, lockFirst(rubricJudge()), llmtest.WithLatency(20*time.Millisecond))
	cfg := f.config(f.qaDataset(8), "")
	cfg.Execution.NumRepetitions, cfg.Execution.MaxConcurrent = 1, 1
	run := f.launch(cfg)

	lock, err := sql.Open("sqlite", filepath.Join(f.dir, "assay.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if conn, err = lock.Conn(context.Background()); err != nil {
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
	// The store waits 10 s for a lock before it fails a write: release it
	// well before, whatever happened.
	const ahead = 9 // tasks done while the first result waits
	deadline := time.Now().Add(7 * time.Second)
	for len(f.srv.Requests()) < 2*ahead && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// A tenth task's calls would begin within a call's time: give it ten.
	time.Sleep(200 * time.Millisecond)
	calls := len(f.srv.Requests())
	results, _ := f.db.Results(context.Background(), run.ID)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if calls != 2*ahead {
		t.Errorf("%d calls while the first result waited for its commit; want %d, nine tasks' (eight results awaiting, one waiting to join them)", calls, 2*ahead)
	}
	if len(results) != 0 {
		t.Errorf("%d results stored while the database was locked", len(results))
	}
	o := <-ended
	if o.err != nil || o.status != store.RunCompleted {
		t.Fatalf("status %s, err %v", o.status, o.err)
	}
	if results, _ = f.db.Results(context.Background(), run.ID); len(results) != 16 {
		t.Errorf("%d results after the lock, want 16 (8 samples, 2 conditions)", len(results))
	}
}
