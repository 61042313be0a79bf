package store

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// A kept part is written without its caller waiting: once its callback
// says so it is in the database, where a resumed run reads it. A part still
// queued when its task's result is saved is dropped, not written: the
// result makes it useless and the write would cost a commit, and its body
// is never encoded.
func TestKeepPendingWritesOrDropsForTheResult(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 2, 1, "a")
	first, second := TaskKey{rows[0].ID, "a", 1}, TaskKey{rows[1].ID, "a", 1}

	kept := make(chan error, 1)
	db.KeepPending(run.ID, first, "answer", encoded(`{"response":"kept"}`), func(err error) { kept <- err })
	if err := <-kept; err != nil {
		t.Fatal(err)
	}
	pending, err := db.PendingWork(ctx, run.ID)
	if err != nil || string(pending[first]["answer"]) != `{"response":"kept"}` {
		t.Fatalf("the kept part: %q, %v", pending[first]["answer"], err)
	}

	// Hold the committer, queue a part behind it, then the task's result.
	held, release := make(chan struct{}), make(chan struct{})
	go db.Commit(ctx, func(context.Context, Tx) error { close(held); <-release; return nil })
	<-held
	encodedDropped := false
	db.KeepPending(run.ID, second, "answer", func() ([]byte, error) { encodedDropped = true; return []byte(`{}`), nil },
		func(err error) { kept <- err })
	db.keeps.mu.Lock()
	part := db.keeps.queued[runTask{run.ID, second}][0]
	db.keeps.mu.Unlock()
	saved := make(chan error, 1)
	go func() {
		_, err := db.SaveResult(ctx, &Result{RunID: run.ID, SampleRow: second.SampleRow, Condition: "a", Repetition: 1, Response: "done"})
		saved <- err
	}()
	for len(db.commits.queue) < 2 { // the part, then the result
		runtime.Gosched()
	}
	close(release)
	if err := <-kept; err != nil {
		t.Errorf("a dropped part reported %v", err)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	if got := part.state.Load(); got != partDropped {
		t.Errorf("the part queued before its result was %d, not dropped", got)
	}
	if encodedDropped {
		t.Error("the dropped part was encoded")
	}
	pending, _ = db.PendingWork(ctx, run.ID)
	if _, ok := pending[second]; ok || len(pending[first]) != 1 {
		t.Errorf("pending work after the result: %v", pending)
	}
	db.keeps.mu.Lock()
	defer db.keeps.mu.Unlock()
	if len(db.keeps.queued) != 0 {
		t.Errorf("parts still tracked after the committer: %v", db.keeps.queued)
	}
}

// encoded is a part's body that is already JSON.
func encoded(body string) func() ([]byte, error) {
	return func() ([]byte, error) { return []byte(body), nil }
}

// A batch one of whose writes fails is written again write by write: a
// part kept in it is written all the same, as is a result after it.
func TestKeptPartSurvivesAFailingWriteOfItsBatch(t *testing.T) {
	ctx := context.Background()
	db, run, rows := goldenRun(t, 2, 1, "a")
	part, result := TaskKey{rows[0].ID, "a", 1}, TaskKey{rows[1].ID, "a", 1}

	held, release := make(chan struct{}), make(chan struct{})
	go db.Commit(ctx, func(context.Context, Tx) error { close(held); <-release; return nil })
	<-held
	kept := make(chan error, 1)
	db.KeepPending(run.ID, part, "answer", encoded(`{"response":"kept"}`), func(err error) { kept <- err })
	failed := make(chan error, 1)
	go func() {
		failed <- db.Commit(ctx, func(ctx context.Context, tx Tx) error {
			if _, err := tx.ExecPrepared(ctx, qSavePending, run.ID, result.SampleRow, "a", 1, "answer", "{}"); err != nil {
				return err
			}
			return errors.New("the write failed")
		})
	}()
	for len(db.commits.queue) < 2 {
		runtime.Gosched()
	}
	saved := make(chan error, 1)
	go func() {
		_, err := db.SaveResult(ctx, &Result{RunID: run.ID, SampleRow: result.SampleRow, Condition: "a", Repetition: 1, Response: "done"})
		saved <- err
	}()
	for len(db.commits.queue) < 3 {
		runtime.Gosched()
	}
	close(release)
	if err := <-kept; err != nil {
		t.Errorf("the kept part: %v", err)
	}
	if err := <-failed; err == nil || err.Error() != "the write failed" {
		t.Errorf("the failing write: %v", err)
	}
	if err := <-saved; err != nil {
		t.Fatal(err)
	}
	pending, err := db.PendingWork(ctx, run.ID)
	if err != nil || string(pending[part]["answer"]) != `{"response":"kept"}` || len(pending) != 1 {
		t.Errorf("pending work: %v, %v", pending, err)
	}
	done, err := db.DoneTasks(ctx, run.ID)
	if err != nil || len(done) != 1 {
		t.Errorf("results stored: %v, %v", done, err)
	}
}
