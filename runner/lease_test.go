package runner_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"assay"
	"assay/runner"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// secondProcess is another manager on its own handle of the fixture's
// database file: what a second assay process sees.
func (f *fixture) secondProcess(program string) (*runner.Manager, *store.DB) {
	f.t.Helper()
	db, err := tally.Open(context.Background(), f.db.Path)
	if err != nil {
		f.t.Fatal(err)
	}
	m := runner.New(db, runner.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Program: program,
		LeaseTTL: 300 * time.Millisecond, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	f.t.Cleanup(func() { m.Close(context.Background()); db.Close() })
	return m, db
}

// waitStatus polls a run until its status is want.
func (f *fixture) waitStatus(id int64, want store.RunStatus) {
	f.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		run, _ := f.db.Run(context.Background(), id)
		if run.Status == want {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("run %d is %s, want %s", id, run.Status, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestARunIsExecutedByOneProcess(t *testing.T) {
	// One call about the last sample waits until the second process has
	// tried: the first cannot finish the run in the meantime, however slow
	// the machine is.
	release := make(chan struct{})
	var held atomic.Bool
	judge := rubricJudge()
	gate := func(req *llmtest.ChatRequest) llmtest.Reply {
		if strings.Contains(string(req.Body), "What is 6 + 6?") && held.CompareAndSwap(false, true) {
			<-release
		}
		return judge(req)
	}
	f := newFixture(t, gate, llmtest.WithLatency(20*time.Millisecond))
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	t.Cleanup(open) // before the fixture's server closes
	first, _ := f.secondProcess("assay run")
	second, _ := f.secondProcess("assay serve")
	run, err := first.CreateFromConfig(context.Background(), f.config(f.qaDataset(6), ""))
	if err != nil {
		t.Fatal(err)
	}
	// A server starting now finds the new run leased by its creator.
	if ids, err := second.ResumeUnfinished(context.Background()); err != nil || len(ids) != 0 {
		t.Fatalf("the server took up %v (%v)", ids, err)
	}
	if err := first.Start(run.ID); err != nil {
		t.Fatal(err)
	}
	for len(results(t, f.db, run.ID)) < 3 {
		time.Sleep(5 * time.Millisecond)
	}
	_, err = second.Execute(context.Background(), run.ID)
	if assay.ErrorCode(err) != assay.ECONFLICT || !strings.Contains(err.Error(), "is being executed by assay run (pid ") {
		t.Fatalf("a second execution: %v", err)
	}
	if err := second.Resume(context.Background(), run.ID); assay.ErrorCode(err) != assay.ECONFLICT {
		t.Fatalf("a second resume: %v", err)
	}
	open()
	second.Adopt(50 * time.Millisecond) // looks again and again while the first works
	f.waitStatus(run.ID, store.RunCompleted)
	if got := f.srv.Stats().Requests; got != 2*run.TotalTasks {
		t.Errorf("the fake server saw %d calls for %d tasks, want one agent and one judge call each", got, run.TotalTasks)
	}
	if n := len(results(t, f.db, run.ID)); n != run.TotalTasks {
		t.Errorf("%d results for %d tasks", n, run.TotalTasks)
	}
}

func TestAnExpiredOrDeadLeaseIsTakenOver(t *testing.T) {
	dead := exec.Command("true")
	dead.Run()
	for name, holder := range map[string]struct {
		h   store.Holder
		ttl time.Duration
	}{
		"expired":            {store.Holder{ID: "gone", Host: "elsewhere", PID: 1, Program: "assay serve"}, -time.Second},
		"dead on this host":  {store.Holder{ID: "killed", Host: hostname(t), PID: dead.Process.Pid, Program: "assay run"}, time.Hour},
		"alive on this host": {store.Holder{ID: "busy", Host: hostname(t), PID: 1, Program: "assay serve"}, time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, rubricJudge())
			run := f.launch(f.config(f.qaDataset(2), ""))
			// The lease moves from the run's creator to the holder of the case.
			gone := func(store.Holder) bool { return false }
			if err := f.db.AcquireLease(context.Background(), run.ID, holder.h, holder.ttl, gone); err != nil {
				t.Fatal(err)
			}
			other, _ := f.secondProcess("assay serve")
			ids, err := other.ResumeUnfinished(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if name == "alive on this host" {
				if len(ids) != 0 {
					t.Errorf("a run held by a live process was taken up: %v", ids)
				}
				return
			}
			if len(ids) != 1 {
				t.Fatalf("took up %v", ids)
			}
			f.waitStatus(run.ID, store.RunCompleted)
		})
	}
}

func TestACancelFromAnotherProcessStopsTheRun(t *testing.T) {
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(20*time.Millisecond))
	worker, _ := f.secondProcess("assay run")
	run, err := worker.CreateFromConfig(context.Background(), f.config(f.qaDataset(20), ""))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan store.RunStatus, 1)
	go func() {
		st, _ := worker.Execute(context.Background(), run.ID)
		done <- st
	}()
	for len(results(t, f.db, run.ID)) < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := f.m.Cancel(context.Background(), run.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case st := <-done:
		if st != store.RunCancelled {
			t.Errorf("the worker ended the run %s", st)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not notice the cancellation")
	}
	if n := len(results(t, f.db, run.ID)); n >= run.TotalTasks {
		t.Errorf("%d of %d tasks done after a cancellation", n, run.TotalTasks)
	}
}

func results(t *testing.T, db *store.DB, id int64) []store.Result {
	t.Helper()
	rs, err := db.Results(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}
