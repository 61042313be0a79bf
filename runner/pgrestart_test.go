package runner_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
)

// Postgres stopped and started again while a run executes: the run pauses
// while it cannot save, and goes on once it can, every task ending once
// and no call made twice beyond those in flight.
func TestPostgresRestartedMidRun(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("a Postgres server's restart: runs when the tests run against Postgres (make test does)")
	}
	ctx := context.Background()
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(5*time.Millisecond))
	cfg := f.config(f.qaDataset(10), "")
	cfg.Execution.MaxConcurrent = 2
	run := f.launch(cfg)
	type outcome struct {
		status store.RunStatus
		err    error
	}
	ended := make(chan outcome, 1)
	go func() {
		status, err := f.m.Execute(ctx, run.ID)
		ended <- outcome{status, err}
	}()
	done := func() int {
		results, _ := f.db.Results(ctx, run.ID)
		return len(results)
	}
	for deadline := time.Now().Add(time.Minute); done() < 10; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d results after a minute", done())
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
	case o := <-ended:
		if o.err != nil || o.status != store.RunCompleted {
			t.Fatalf("the run ended %s: %v", o.status, o.err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the run did not end after Postgres came back")
	}
	results, err := f.db.Results(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[store.TaskKey]int{}
	for _, r := range results {
		seen[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}]++
		if r.Error != "" || len(r.Judgements) != 1 {
			t.Errorf("result %d: error %q, %d judgements", r.ID, r.Error, len(r.Judgements))
		}
	}
	if len(results) != 60 || len(seen) != 60 {
		t.Fatalf("%d results for %d tasks, want 60 once each", len(results), len(seen))
	}
	if calls := f.srv.Stats().Requests; calls > 120+2*2 {
		t.Errorf("%d calls for 60 tasks (an agent's and a judge's each, and at most two tasks in flight again)", calls)
	}
}

// The database's connections cut while a run executes (an administrator
// ending them, a proxy between dropping them): the run goes on over new
// ones, every task once.
func TestConnectionsCutMidRun(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("Postgres's connections ended by its server: runs when the tests run against Postgres (make test does)")
	}
	ctx := context.Background()
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(5*time.Millisecond))
	cfg := f.config(f.qaDataset(10), "")
	cfg.Execution.MaxConcurrent = 2
	run := f.launch(cfg)
	ended := make(chan error, 1)
	go func() {
		status, err := f.m.Execute(ctx, run.ID)
		if err == nil && status != store.RunCompleted {
			r, _ := f.db.Run(ctx, run.ID)
			err = fmt.Errorf("the run ended %s: %s", status, r.Message)
		}
		ended <- err
	}()
	admin, err := pgtest.OpenRaw(pgtest.Server(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.QueryRow(`SELECT datname FROM pg_stat_activity WHERE datname LIKE 't_%' ORDER BY backend_start DESC LIMIT 1`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	cuts := 0
	for done := 0; done < 50; {
		select {
		case err := <-ended:
			t.Fatalf("the run ended after %d cuts before the test cut more: %v", cuts, err)
		default:
		}
		results, _ := f.db.Results(ctx, run.ID)
		if len(results) >= 10*(cuts+1) {
			var n int
			if err := admin.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = $1 AND pid != pg_backend_pid()`, name).Scan(&n); err != nil {
				t.Fatal(err)
			}
			cuts++
		}
		done = len(results)
		if cuts >= 3 {
			break
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
	results, _ := f.db.Results(ctx, run.ID)
	seen := map[store.TaskKey]bool{}
	for _, r := range results {
		seen[store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}] = true
	}
	if cuts < 3 || len(results) != 60 || len(seen) != 60 {
		t.Fatalf("after %d cuts: %d results for %d tasks, want 60 once each", cuts, len(results), len(seen))
	}
}
