package runner_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// startPgRun starts, in the background, a run of 60 tasks (10 samples × 2
// conditions × 3 repetitions, two at once) on a Postgres database; the
// channel gives its end: nil when it completed.
func startPgRun(t *testing.T, why string) (*fixture, *store.Run, <-chan error) {
	t.Helper()
	if !pgtest.OnPostgres() {
		t.Skip(why + ": runs when the tests run against Postgres (make test does)")
	}
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(5*time.Millisecond))
	cfg := f.config(f.qaDataset(10), "")
	cfg.Execution.MaxConcurrent = 2
	run := f.launch(cfg)
	ended := make(chan error, 1)
	go func() {
		ctx := context.Background()
		status, err := f.m.Execute(ctx, run.ID)
		if err == nil && status != store.RunCompleted {
			r, _ := f.db.Run(ctx, run.ID)
			err = fmt.Errorf("the run ended %s: %s", status, r.Message)
		}
		ended <- err
	}()
	return f, run, ended
}

// results counts a run's results.
func (f *fixture) results(run *store.Run) int {
	results, _ := f.db.Results(context.Background(), run.ID)
	return len(results)
}

// everyTaskOnce checks the run has its 60 tasks' results, one each, and
// returns them.
func everyTaskOnce(t *testing.T, f *fixture, run *store.Run, after string) []store.Result {
	t.Helper()
	results, err := f.db.Results(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[store.TaskKey]bool{}
	for _, r := range results {
		seen[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}] = true
	}
	if len(results) != 60 || len(seen) != 60 {
		t.Fatalf("%s: %d results for %d tasks, want 60 once each", after, len(results), len(seen))
	}
	return results
}

// Postgres stopped and started again while a run executes: the run pauses
// while it cannot save, and goes on once it can, every task ending once
// and no call made twice beyond those in flight.
func TestPostgresRestartedMidRun(t *testing.T) {
	f, run, ended := startPgRun(t, "a Postgres server's restart")
	for deadline := time.Now().Add(time.Minute); f.results(run) < 10; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d results after a minute", f.results(run))
		}
	}
	pgtest.Restart(t, func() {
		// Down until the run has met it and paused, and some seconds more:
		// its tries to save meet no server at all.
		for deadline := time.Now().Add(time.Minute); f.m.Paused(run.ID) == ""; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("the run did not pause while Postgres was down")
				return
			}
		}
		time.Sleep(3 * time.Second)
	})
	select {
	case err := <-ended:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end after Postgres came back")
	}
	for _, r := range everyTaskOnce(t, f, run, "after the restart") {
		if r.Error != "" || len(r.Judgements) != 1 {
			t.Errorf("result %d: error %q, %d judgements", r.ID, r.Error, len(r.Judgements))
		}
	}
	if calls := f.srv.Stats().Requests; calls > 120+2*2 {
		t.Errorf("%d calls for 60 tasks (an agent's and a judge's each, and at most two tasks in flight again)", calls)
	}
}

// The database's connections cut while a run executes (an administrator
// ending them, a proxy between dropping them): the run goes on over new
// ones, every task once.
func TestConnectionsCutMidRun(t *testing.T) {
	f, run, ended := startPgRun(t, "Postgres's connections ended by its server")
	admin, err := pgtest.OpenRaw(pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	u, err := url.Parse(f.db.Path)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	cuts := 0
	for cuts < 3 {
		select {
		case err := <-ended:
			t.Fatalf("the run ended after %d cuts before the test cut more: %v", cuts, err)
		default:
		}
		if f.results(run) >= 10*(cuts+1) {
			var n int
			if err := admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid != pg_backend_pid()`, name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			cuts++
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("after %d cuts: %v", cuts, err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end")
	}
	everyTaskOnce(t, f, run, fmt.Sprintf("after %d cuts", cuts))
}
