package runner_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"assay/internal/pgtest"
	"assay/runner/llm/llmtest"
	"assay/store"
	"assay/tally"
)

// A run on a Postgres database is executed by the servers on it together:
// one started it, two others join it, do a share of its samples and leave
// (and join again while samples are left, their plans older than what the
// others did meanwhile); every task is done once, each did some, and the
// calls in flight at once never pass the run's max_concurrent, which they
// share.
func TestARunIsSharedByTheServersOnItsDatabase(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("servers share a run's tasks on a Postgres database: runs when the tests run against Postgres (make test does)")
	}
	var flying, most atomic.Int64
	judge := rubricJudge()
	counted := func(req *llmtest.ChatRequest) llmtest.Reply {
		n := flying.Add(1)
		defer flying.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(15 * time.Millisecond)
		return judge(req)
	}
	f := newFixture(t, counted)
	first, _ := f.secondProcess("assay serve")
	second, db := f.secondProcess("assay serve")
	third, _ := f.secondProcess("assay serve")
	run, err := first.CreateFromConfig(context.Background(), f.config(f.qaDataset(60), ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(run.ID); err != nil {
		t.Fatal(err)
	}
	second.Adopt(50 * time.Millisecond)
	third.Adopt(70 * time.Millisecond)
	// While it runs, all three execute it, each with tasks done.
	shared := false
	for deadline := time.Now().Add(60 * time.Second); !shared; time.Sleep(10 * time.Millisecond) {
		executors, err := db.Executors(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(executors) == 3 && executors[0].TasksDone > 0 && executors[1].TasksDone > 0 && executors[2].TasksDone > 0 {
			shared = true
		}
		if r, _ := db.Run(context.Background(), run.ID); r.Status == store.RunCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run was not shared within a minute")
		}
	}
	f.waitStatus(run.ID, store.RunCompleted)
	if !shared {
		t.Error("the run completed before all three servers did some of its tasks at once")
	}
	if got := f.srv.Stats().Requests; got != 2*run.TotalTasks {
		t.Errorf("the fake server saw %d calls for %d tasks, want one agent and one judge call each", got, run.TotalTasks)
	}
	rs := results(t, f.db, run.ID)
	if len(rs) != run.TotalTasks {
		t.Errorf("%d results for %d tasks", len(rs), run.TotalTasks)
	}
	// The totals both servers added to at once count every result once.
	byCondition := map[string]int{}
	for _, r := range rs {
		byCondition[r.Condition]++
	}
	progress, err := tally.Of(f.db).RunProgress(context.Background(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range progress {
		if p.Done != byCondition[p.Condition] || p.Done != run.TotalTasks/2 {
			t.Errorf("condition %s: %d done in its totals, %d results", p.Condition, p.Done, byCondition[p.Condition])
		}
	}
	// max_concurrent is 4: the agent's call and the judge's of a task are one after the other.
	if m := most.Load(); m > 4 {
		t.Errorf("%d calls in flight at once, for a run of max_concurrent 4 shared by three servers", m)
	}
	if executors, err := db.Executors(context.Background(), run.ID); err != nil || len(executors) != 0 {
		t.Errorf("a completed run has executors %v (%v)", executors, err)
	}
}

// A run with a budget stays with the server that started it: its budget
// holds to a task only where every reservation is seen. The others, looking
// again and again, never join it.
func TestARunWithABudgetIsNotShared(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("servers share a run's tasks on a Postgres database: runs when the tests run against Postgres (make test does)")
	}
	f := newFixture(t, rubricJudge(), llmtest.WithLatency(10*time.Millisecond))
	first, _ := f.secondProcess("assay serve")
	second, db := f.secondProcess("assay serve")
	cfg := f.config(f.qaDataset(20), `budget_usd: 100
prices: {agent-model: {input_per_mtok: 1, output_per_mtok: 1}, judge-model: {input_per_mtok: 1, output_per_mtok: 1}}`)
	run, err := first.CreateFromConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(run.ID); err != nil {
		t.Fatal(err)
	}
	second.Adopt(20 * time.Millisecond)
	most := 0
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		executors, err := db.Executors(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		most = max(most, len(executors))
		if r, _ := db.Run(context.Background(), run.ID); r.Status == store.RunCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not complete within a minute")
		}
	}
	if most != 1 {
		t.Errorf("a run with a budget had %d executors at once", most)
	}
	if n := len(results(t, f.db, run.ID)); n != run.TotalTasks {
		t.Errorf("%d results for %d tasks", n, run.TotalTasks)
	}
}

// A server that joins a shared run late — after as many tasks as a first
// pass over its samples makes — still finds samples nobody has started and
// does their tasks, each once: a shared run takes its samples whole, one
// after another, rather than every sample's first repetition first.
func TestAServerJoiningLateFindsWorkLeft(t *testing.T) {
	if !pgtest.OnPostgres() {
		t.Skip("servers share a run's tasks on a Postgres database: runs when the tests run against Postgres (make test does)")
	}
	judge := rubricJudge()
	f := newFixture(t, func(req *llmtest.ChatRequest) llmtest.Reply {
		time.Sleep(5 * time.Millisecond)
		return judge(req)
	})
	first, _ := f.secondProcess("assay serve")
	late, db := f.secondProcess("assay serve (late)")
	run, err := first.CreateFromConfig(context.Background(), f.config(f.qaDataset(60), ""))
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(run.ID); err != nil {
		t.Fatal(err)
	}
	pass := run.TotalTasks / 3 // every sample under both conditions once
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		progress, err := tally.Of(db).RunProgress(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		done := 0
		for _, p := range progress {
			done += p.Done
		}
		if done >= pass {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d tasks done in a minute", done)
		}
	}
	late.Adopt(20 * time.Millisecond)
	lateDid := 0
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		executors, err := db.Executors(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range executors {
			if strings.HasPrefix(e.Node, "assay serve (late)") {
				lateDid = max(lateDid, e.TasksDone)
			}
		}
		if r, _ := db.Run(context.Background(), run.ID); r.Status == store.RunCompleted {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the run did not complete within a minute")
		}
	}
	if lateDid == 0 {
		t.Error("the server that joined after a pass over the samples did no task")
	}
	rs := results(t, f.db, run.ID)
	seen := map[store.TaskKey]bool{}
	for _, r := range rs {
		k := store.TaskKey{SampleRow: r.SampleRow, Condition: r.Condition, Repetition: r.Repetition}
		if seen[k] {
			t.Errorf("task %+v done twice", k)
		}
		seen[k] = true
	}
	if len(rs) != run.TotalTasks || f.srv.Stats().Requests != 2*run.TotalTasks {
		t.Errorf("%d results and %d calls for %d tasks", len(rs), f.srv.Stats().Requests, run.TotalTasks)
	}
	progress, _ := tally.Of(f.db).RunProgress(context.Background(), run.ID)
	for _, p := range progress {
		if p.Done != run.TotalTasks/2 {
			t.Errorf("condition %s: %d done in its totals, want %d", p.Condition, p.Done, run.TotalTasks/2)
		}
	}
}
